"""A storm of likes, unlikes, folds and reads from several threads under AWS's transaction
conflict rules (modelled): the badge still equals the unread likes, and no like is lost
between unread and read (nor notified twice)."""

import random
from collections import Counter

import pytest

from notifications import selectors
from notifications import services as notification_services
from notifications.models import LikeNotified, LikeRead, LikeUnread, UnreadCount
from project.testing.harness import in_threads
from social.models import Like
from tests.notifications.helpers import fold, like, post, uid, unlike

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
    pytest.mark.usefixtures("fold_by_the_worker", "aws_read_lag"),
]

THREADS = 8
OPERATIONS_PER_THREAD = 30


def test_badge_equals_unread_likes_after_a_concurrent_storm(make_user, aws_conflicts):
    authors = [make_user(f"author{n}") for n in range(2)]
    likers = [make_user(f"liker{n}") for n in range(5)] + authors  # authors like too (self-likes notify nobody)
    comments = {post(author, f"{author.username} #{n}"): author for author in authors for n in range(3)}
    comment_ids = list(comments)

    def worker(seed: int) -> Counter[str]:
        """One person's random actions; returns how many of each it made (its own count, no sharing)."""
        rng = random.Random(seed)
        done: Counter[str] = Counter()
        for _ in range(OPERATIONS_PER_THREAD):
            roll = rng.random()
            if roll < 0.45:
                like(rng.choice(likers), rng.choice(comment_ids))
                done["like"] += 1
            elif roll < 0.8:
                unlike(rng.choice(likers), rng.choice(comment_ids))
                done["unlike"] += 1
            elif roll < 0.9:
                author = rng.choice(authors)
                mine = [cid for cid, owner in comments.items() if owner == author]
                notification_services.like_notifications_mark_read(user_id=uid(author), comment_ids=rng.sample(mine, 2))
                done["read"] += 1
            else:
                notification_services.like_notifications_mark_all_read(user_id=uid(rng.choice(authors)))
                done["read_all"] += 1
        return done

    done = sum(in_threads(worker, THREADS), Counter())  # a thread that raised fails the test here
    assert done["read"] + done["read_all"] > 0  # the seeds make readers too
    fold()  # what the folder left pending when folds of the threads cancelled each other

    for author in authors:
        author_id = uid(author)
        counts = {item.source: int(item.count) for item in UnreadCount.query(author_id, consistent_read=True)}
        unread = {item.comment_id: item for item in LikeUnread.query(author_id, consistent_read=True)}
        read_copies = {}
        for item in LikeRead.query(author_id, consistent_read=True):
            read_copies.setdefault(item.comment_id, []).extend(item.liker_ids)

        for comment_id in (cid for cid, owner in comments.items() if owner == author):
            item = unread[comment_id]
            liker_ids = list(item.liker_ids)
            assert int(item.num_likes) == len(liker_ids) == counts[f"like#{comment_id}"], comment_id
            assert len(set(liker_ids)) == len(liker_ids), "a liker twice in one unread notification"
            assert author_id not in liker_ids, "a self-like notified"
            current = {like_row.user_id for like_row in Like.query(comment_id, consistent_read=True)}
            # everyone in the unread notification still likes the comment ...
            assert set(liker_ids) <= current
            # ... and every current like by someone else was notified: it is unread, in the read
            # history, or was taken out unseen by an unlike and liked again within the window
            # (which notifies nobody a second time); either way its marker is there
            notified = {marker.user_id for marker in LikeNotified.query(comment_id, consistent_read=True)}
            for liker_id in current - {author_id}:
                assert liker_id in notified, (comment_id, liker_id)
            assert set(liker_ids) <= notified and set(read_copies.get(comment_id, [])) <= notified

        unread_likes = sum(len(item.liker_ids) for item in unread.values())
        assert unread_likes == sum(counts.values())
        # one notification per comment with unread likes
        assert selectors.unread_count(user_id=author_id) == sum(1 for n in counts.values() if n > 0)
