"""A popular comment on AWS: many people like it at once under AWS's transaction
conflict rules (modelled on DynamoDB Local by the `aws_conflicts` fixture), and no like fails."""

from concurrent.futures import ThreadPoolExecutor

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from actions.comments import comment_create
from actions.likes import like_add, like_remove
from notifications import selectors as notification_selectors
from notifications.models import LikeEvent, LikeUnread
from social import counters
from social.counters import LIKES, counter_key

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

PEOPLE = 32


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def test_32_people_like_unlike_and_like_again_one_comment_without_a_failure(
    make_user, aws_conflicts, fold_likes, settings
):
    settings.LIKE_COUNTER_SHARDS = 1  # the counter grows its shards by itself
    author = make_user("author")
    comment_id = comment_create(author_id=str(author.pk), body="Popular").comment_id
    tokens = [Token.objects.create(user=make_user(f"fan{n}")).key for n in range(PEOPLE)]
    url = f"/api/comments/{comment_id}/like/"

    def like_unlike_like(token):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
        answers = [client.put(url), client.delete(url), client.put(url)]
        return [(answer.status_code, answer.json()) for answer in answers]

    with ThreadPoolExecutor(max_workers=PEOPLE) as pool:
        results = list(pool.map(like_unlike_like, tokens))

    statuses = [status for person in results for status, _ in person]
    assert statuses == [200] * (3 * PEOPLE)
    for (_, liked), (_, unliked), (_, liked_again) in results:
        assert (liked["liked"], unliked["liked"], liked_again["liked"]) == (True, False, True)
        assert 1 <= liked_again["like_count"] <= PEOPLE
    assert aws_conflicts.transactions >= 3 * PEOPLE
    assert APIClient().get(f"/api/comments/{comment_id}/").json()["like_count"] == PEOPLE

    fold_likes()
    assert list(LikeEvent.query(comment_id, consistent_read=True)) == []
    unread = LikeUnread.get(str(author.pk), comment_id, consistent_read=True)
    # each person notifies once, although each liked twice
    assert int(unread.num_likes) == PEOPLE == notification_selectors.unread_count(user_id=str(author.pk))
    assert len(unread.liker_ids) == len(set(unread.liker_ids)) == min(PEOPLE, settings.LIKE_NOTIFICATION_LIKERS_MAX)


def test_a_contended_counter_grows_its_shards_up_to_the_maximum(settings):
    settings.LIKE_COUNTER_SHARDS = 1
    settings.COUNTER_SHARDS_MAX = 20
    key = counter_key(kind=LIKES, object_id="hot")
    grown = []
    for _ in range(4):
        counters._grown_at.clear()  # one growth per SHARD_GROWTH_INTERVAL: let each call grow
        grown.append(counters.counter_contended(key=key))
    assert grown == [4, 16, 20, 20]
    counters.counters_forget_caches()
    assert counters.counter_shard_count(key=key) == 20  # stored, seen by every process
    # staff still set any count; contention grows it again from there
    counters.counter_set_shards(key=key, shards=2)
    counters._grown_at.clear()
    assert counters.counter_contended(key=key) == 8


def test_a_contended_counter_never_shrinks_a_larger_count_another_process_stored(settings):
    settings.LIKE_COUNTER_SHARDS = 1
    key = counter_key(kind=LIKES, object_id="hot")
    counters.counter_contended(key=key)  # this process: 4
    counters.counter_set_shards(key=key, shards=32)  # another process grew it further
    counters._override_remember(key, 4)  # this process still believes 4
    counters._grown_at.clear()
    # its write (16) is refused; it re-reads and writes with the stored, larger count
    assert counters.counter_contended(key=key) == 32 == counters.counter_shard_count(key=key)


def test_the_folder_compacts_a_hot_counter_so_a_page_reads_one_item(make_user, settings, fold_likes):
    settings.LIKE_FOLD_AFTER_RESPONSE = False
    author = make_user("author")
    comment_id = comment_create(author_id=str(author.pk), body="Hot").comment_id
    key = counter_key(kind=LIKES, object_id=comment_id)
    counters.counter_set_shards(key=key, shards=32)
    for n in range(40):
        like_add(comment_id=comment_id, user_id=str(100 + n))
    assert len(list(counters.CounterShard.query(key, consistent_read=True))) >= counters.COMPACT_MIN_ITEMS
    fold_likes()
    assert [(int(item.shard), int(item.count)) for item in counters.CounterShard.query(key)] == [(-1, 40)]
    assert like_remove(comment_id=comment_id, user_id="100").like_count == 39
    assert like_add(comment_id=comment_id, user_id="999").like_count == 40


def test_a_like_landing_during_compaction_cancels_it_and_nothing_is_lost(make_user):
    from unittest import mock

    author = make_user("author")
    comment_id = comment_create(author_id=str(author.pk), body="Hot").comment_id
    key = counter_key(kind=LIKES, object_id=comment_id)
    for shard in range(10):
        counters.CounterShard(key, shard, count=2).save()
    real_query = counters.CounterShard.query

    def query_then_like(*args, **kwargs):
        found = list(real_query(*args, **kwargs))
        counters.CounterShard(key, 3).update(actions=[counters.CounterShard.count.add(1)])  # lands now
        return found

    with mock.patch.object(counters.CounterShard, "query", query_then_like):
        assert counters.counter_compact(key=key) is False
    assert counters.counter_value(key=key) == 21
    assert counters.counter_compact(key=key) is True
    assert [(int(item.shard), int(item.count)) for item in real_query(key)] == [(-1, 21)]
