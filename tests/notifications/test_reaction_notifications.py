"""The author's reaction notification: folded as likes are, one per comment while unread ("Alice and 3
others reacted to your comment", with the reactions shown), retracted when withdrawn, obeying the
`reaction` preference, blocks and mutes, e-mail on or off; a crash between the answer and the fold;
a hot comment under AWS's transaction conflict rules."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest
from django.core import mail
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

import notifications.like_fold as like_fold
from actions.reactions import reaction_add, reaction_remove
from actions.relations import relation_change
from notifications import selectors
from notifications.mail.queue import MAIL_QUEUE_SHARDS
from notifications.models import LikeEvent, MailQueue
from notifications.preferences.services import preferences_update
from notifications.services import like_notifications_mark_read
from notifications.subjects import reaction_subject
from social.counters import REACTIONS, counter_key
from social.models import CounterTotal
from social.reactions.selectors import reaction_state
from tests.notifications.helpers import fold, like, post, uid
from tests.notifications.mail_helpers import email_on, schedule, send_due, verified

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fold_by_the_worker", "aws_read_lag")]


def react(user, comment_id, name="heart", *, folded=True):
    state = reaction_add(comment_id=comment_id, user_id=uid(user), name=name)
    if folded:
        fold()
    return state


def unreact(user, comment_id, name="heart", *, folded=True):
    state = reaction_remove(comment_id=comment_id, user_id=uid(user), name=name)
    if folded:
        fold()
    return state


def inbox(user):
    return selectors.notification_inbox(user_id=uid(user)).results


def texts(user) -> list[str]:
    return [n.text for n in inbox(user)]


def badge(user) -> int:
    return selectors.unread_count(user_id=uid(user))


def mails() -> list[MailQueue]:
    return [item for shard in range(MAIL_QUEUE_SHARDS) for item in MailQueue.query(str(shard), consistent_read=True)]


def test_reactions_of_four_people_are_one_notification_naming_the_first_with_the_reactions_shown(people):
    author, alice, bob, carol, dave = (people[n] for n in ("author", "alice", "bob", "carol", "dave"))
    comment = post(author)
    react(alice, comment, "heart")
    assert texts(author) == ["Alice reacted to your comment ❤️"] and badge(author) == 1
    react(alice, comment, "hooray")  # a second reaction of the same person counts once
    react(bob, comment, "laugh")
    react(carol, comment, "heart")
    react(dave, comment, "eyes")
    react(author, comment, "thumbs_up")  # the author's own reaction tells nobody
    [notification] = inbox(author)
    assert notification.kind == "reaction" and notification.comment_id == comment
    assert notification.text == "Alice and 3 others reacted to your comment 👍 ❤️ 😄 🎉 👀"
    assert notification.actor_count == 4 and notification.url == f"/c/{comment}/"
    assert notification.read_field == "comment_ids" and notification.read_id == f"reaction#{comment}"
    assert badge(author) == 1
    assert texts(alice) == []  # nobody else is told


def test_one_entry_per_comment_while_unread_beside_its_like_notification_and_a_new_one_after_the_read(people, api):
    author, alice, bob, carol = people["author"], people["alice"], people["bob"], people["carol"]
    comment = post(author)
    react(alice, comment)
    like(alice, comment)
    react(bob, comment, "eyes")
    assert sorted(texts(author)) == ["Alice and Bob reacted to your comment ❤️ 👀", "Alice liked your comment"]
    assert badge(author) == 2
    # The reaction notification is marked read by its own id; the like one stays unread.
    answer = api.as_user(author).post(
        "/api/notifications/read/", {"comment_ids": [f"reaction#{comment}"]}, format="json"
    )
    assert answer.status_code == 200 and answer.json()["unread_count"] == 1
    react(carol, comment, "laugh")
    unread = [n for n in inbox(author) if n.unread]
    assert sorted(n.text for n in unread) == [
        "Alice liked your comment",
        "Carol reacted to your comment ❤️ 😄 👀",
    ]
    refused = api.as_user(author).post("/api/notifications/read/", {"comment_ids": ["reaction#x"]}, format="json")
    assert refused.status_code == 400 and "comment_ids" in refused.json()


def test_a_withdrawn_reaction_leaves_the_notification_and_the_last_one_takes_it_away(people):
    author, alice, bob = people["author"], people["alice"], people["bob"]
    comment = post(author)
    react(alice, comment, "heart")
    react(alice, comment, "eyes")
    react(bob, comment, "laugh")
    assert texts(author) == ["Alice and Bob reacted to your comment ❤️ 😄 👀"]
    unreact(alice, comment, "heart")  # Alice still reacts (👀): she stays
    assert texts(author) == ["Alice and Bob reacted to your comment 😄 👀"]
    unreact(alice, comment, "eyes")  # her last one: she leaves the names and the count
    assert texts(author) == ["Bob reacted to your comment 😄"] and badge(author) == 1
    unreact(bob, comment, "laugh")  # every reaction withdrawn: the entry goes
    assert texts(author) == [] and badge(author) == 0


def test_reactions_off_notify_nothing_and_still_count(people, api):
    author, alice = people["author"], people["alice"]
    assert api.as_user(author).get("/api/me/preferences/").json()["kinds"]["reaction"] == {
        "inbox": True,
        "email": False,
        "push": False,
    }
    answer = api.as_user(author).patch("/api/me/preferences/", {"kinds": {"reaction": {"inbox": False}}}, format="json")
    assert answer.status_code == 200 and answer.json()["kinds"]["reaction"]["inbox"] is False
    comment = post(author)
    react(alice, comment)
    assert reaction_state(comment_id=comment, user_id=uid(alice)).counts == {"heart": 1}
    assert texts(author) == [] and badge(author) == 0
    like(alice, comment)  # likes are their own kind: still on
    assert texts(author) == ["Alice liked your comment"]


@pytest.mark.parametrize("relation", ["block", "mute"])
def test_a_blocked_or_muted_person_s_reactions_notify_nothing_and_a_block_retracts_them(people, relation):
    author, alice, bob = people["author"], people["alice"], people["bob"]
    comment = post(author)
    relation_change(owner_id=uid(author), username=bob.username, kind=relation, on=True)
    react(bob, comment)
    assert texts(author) == [] and badge(author) == 0
    react(alice, comment, "eyes")
    assert texts(author) == ["Alice reacted to your comment ❤️ 👀"]
    carol = people["carol"]
    react(carol, comment, "eyes")
    relation_change(owner_id=uid(author), username=carol.username, kind=relation, on=True)
    fold()
    assert texts(author) == ["Alice reacted to your comment ❤️ 👀"]
    assert reaction_state(comment_id=comment, user_id=uid(bob)).counts == {"heart": 1, "eyes": 2}


def test_reactions_by_email_send_one_mail_while_unread_and_none_when_off(people):
    author, alice, bob = people["author"], people["alice"], people["bob"]
    verified(author)
    comment = post(author, body="Something *worth* a reaction")
    react(alice, comment)
    assert mails() == []  # e-mail is off by default
    email_on(author, "reaction")
    like_notifications_mark_read(user_id=uid(author), comment_ids=[reaction_subject(comment)])
    react(bob, comment, "hooray")
    react(alice, comment, "eyes")  # already unread: no second mail (and Alice was told lately: not again)
    [queued] = mails()
    assert (queued.kind, queued.entry_id) == ("reaction", comment)
    assert queued.source.startswith(f"reaction:{comment}:")
    schedule(author, kind="reaction", entry_id=comment)
    assert send_due().get("sent") == 1
    [sent] = mail.outbox
    assert sent.subject == "“Bob” reacted to your comment ❤️ 🎉 👀"
    assert "worth a reaction" in sent.body
    # Off again: the next unread notification schedules nothing.
    preferences_update(user_id=uid(author), patch={"kinds": {"reaction": {"email": False}}})
    like_notifications_mark_read(user_id=uid(author), comment_ids=[reaction_subject(comment)])
    before = {m.source for m in mails()}
    react(people["carol"], comment)
    assert texts(author)[0] == "Carol reacted to your comment ❤️ 🎉 👀"
    assert {m.source for m in mails()} == before and send_due().get("sent") == 0 and len(mail.outbox) == 1


def _due(comment_id) -> bool:
    try:
        total = CounterTotal.get(counter_key(kind=REACTIONS, object_id=comment_id), consistent_read=True)
    except CounterTotal.DoesNotExist:
        return False
    return total.due_at is not None


def test_a_process_that_dies_after_the_answer_leaves_the_notification_and_the_ranking_to_the_folder(
    people, settings, monkeypatch
):
    """The event is in the reaction's transaction: the request's own fold never runs (the process
    died once the answer was sent), yet the folder notifies the author and raises the due flag."""
    settings.LIKE_FOLD_AFTER_RESPONSE = True
    author, alice = people["author"], people["alice"]
    comment = post(author)

    def died(*, event):
        raise SystemExit("the process died after the answer")

    monkeypatch.setattr(like_fold, "like_events_fold_after_response", died)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=alice).key}")
    with pytest.raises(SystemExit):
        client.put(f"/api/comments/{comment}/reactions/heart/")
    assert reaction_state(comment_id=comment, user_id=uid(alice)).counts == {"heart": 1}
    assert texts(author) == [] and not _due(comment)
    [event] = LikeEvent.query(reaction_subject(comment), consistent_read=True)
    assert event.request_folds and event.liker_id == uid(alice)
    monkeypatch.undo()
    assert fold() == 1  # what `fold_like_events` does within its poll
    assert texts(author) == ["Alice reacted to your comment ❤️"] and _due(comment)


def test_many_people_reacting_on_one_hot_comment_at_once_fail_none_and_are_told_once(
    people, make_user, aws_conflicts, settings
):
    settings.LIKE_FOLD_AFTER_RESPONSE = True  # requests fold what is cheap; the folder the rest
    author = people["author"]
    comment = post(author)
    crowd = [uid(make_user(f"reactor{n}")) for n in range(24)]

    def both(person):
        reaction_add(comment_id=comment, user_id=person, name="heart")
        return reaction_add(comment_id=comment, user_id=person, name="eyes")

    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(both, crowd))
    assert all(answer.mine == ("heart", "eyes") for answer in answers)
    fold()
    assert reaction_state(comment_id=comment, user_id=crowd[0]).counts == {"heart": 24, "eyes": 24}
    [notification] = inbox(author)
    assert notification.actor_count == 24 and notification.text.endswith("23 others reacted to your comment ❤️ 👀")
    assert badge(author) == 1
    assert aws_conflicts.transactions >= 2 * len(crowd)  # every one answered: none failed
