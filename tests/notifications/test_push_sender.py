"""The push sender against a local push service: encrypted payload, VAPID, TTL / Urgency / Topic,
re-checks at send time, 404/410 forgets the browser, 429/5xx retried, each push at most once."""

from __future__ import annotations

import threading
import time

import pytest

from notifications.mail.queue import PUSH
from notifications.mail.selectors import ledger_get, mail_queue_due
from notifications.models import MailQueue, PushSubscription
from notifications.preferences.services import preferences_update, thread_mute
from notifications.push.content import push_topic
from notifications.push.sender import PUSH_ATTEMPTS, push_process
from notifications.services import inbox_mark_read
from project.clock import ManualClock, clock_override
from tests.notifications.mail_helpers import newest_entry_id, reply_to
from tests.notifications.push_helpers import push_due, push_on, subscribed, uid

pytestmark = pytest.mark.django_db


@pytest.fixture
def manual_clock():
    """Now, standing still unless a retry's backoff sleeps (then it moves on at once)."""
    with clock_override(ManualClock(start=time.time())) as manual:
        yield manual


@pytest.fixture
def alice_and_bob(make_user, settings, push_service, manual_clock):
    settings.SITE_URL = "https://social.example"
    alice = make_user("alice", display_name="Alice")
    bob = make_user("bob", display_name="Bob")
    push_on(alice, "reply")
    return alice, bob


def line(user, source):
    return ledger_get(user_id=uid(user), channel=PUSH, source=source)


def pending_source(user) -> str:
    (item,) = [item for item in mail_queue_due(channel=PUSH) if item.user_id == uid(user)]
    return item.source


def test_an_unread_reply_is_pushed_once_encrypted_with_its_ttl_urgency_and_topic(alice_and_bob, push_service):
    alice, bob = alice_and_bob
    browser = subscribed(alice, push_service)
    parent, reply = reply_to(alice, bob, "Nice point about caching")
    source = pending_source(alice)

    assert push_due().get("sent") == 1
    assert push_due().get("sent") == 0
    assert push_service.refused == []
    (got,) = push_service.delivered(browser)
    entry_id = newest_entry_id(alice)
    assert got.payload["kind"] == "reply" and got.payload["id"] == source and got.payload["entry_id"] == entry_id
    assert got.payload["title"] == "Bob replied to your comment"
    assert got.payload["body"] == "Nice point about caching"
    assert got.payload["url"] == f"https://social.example/c/{parent}/#c-{reply}"
    assert got.payload["count"] == 1
    assert got.headers["topic"] == push_topic(kind="reply", entry_id=entry_id)
    assert got.headers["urgency"] == "normal"
    assert 0 < int(got.headers["ttl"]) <= 2 * 24 * 3600
    assert line(alice, source).state == "sent"
    assert MailQueue.count() == 0
    (subscription,) = PushSubscription.query(uid(alice))
    assert int(subscription.last_used_at) > 0


def test_a_long_comment_is_cut_as_the_inbox_cuts_it(alice_and_bob, push_service):
    alice, bob = alice_and_bob
    browser = subscribed(alice, push_service)
    reply_to(alice, bob, "word " * 200)
    push_due()
    (got,) = push_service.delivered(browser)
    assert len(got.payload["body"]) <= 80 and got.payload["body"].endswith("…")


def test_push_off_schedules_nothing(make_user, push_service, manual_clock):
    alice, bob = make_user("alice"), make_user("bob")
    subscribed(alice, push_service)
    reply_to(alice, bob)
    assert mail_queue_due(channel=PUSH) == []


def test_replies_rolled_into_one_entry_share_its_topic(alice_and_bob, push_service, make_user):
    alice, bob = alice_and_bob
    browser = subscribed(alice, push_service)
    parent, _ = reply_to(alice, bob)
    from actions.comments import comment_create

    carol = make_user("carol", display_name="Carol")
    comment_create(author_id=uid(carol), body="Me too", parent_id=parent)
    assert push_due().get("sent") == 2
    first, second = push_service.delivered(browser)
    assert first.headers["topic"] == second.headers["topic"]  # the second replaces the first on the device
    assert second.payload["count"] == 2 and "others" not in first.payload["title"]


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda alice: inbox_mark_read(user_id=uid(alice), entry_ids=[newest_entry_id(alice)]), "read before send"),
        (
            lambda alice: preferences_update(user_id=uid(alice), patch={"kinds": {"reply": {"push": False}}}),
            "preference off",
        ),
    ],
)
def test_rechecked_at_send_time(alice_and_bob, push_service, change, reason):
    alice, bob = alice_and_bob
    subscribed(alice, push_service)
    reply_to(alice, bob)
    source = pending_source(alice)
    change(alice)
    assert push_due().get("skipped") == 1
    assert push_service.received == []
    assert line(alice, source).state == "skipped" and line(alice, source).reason.startswith(reason)


def test_a_muted_thread_is_skipped(alice_and_bob, push_service):
    alice, bob = alice_and_bob
    subscribed(alice, push_service)
    parent, _ = reply_to(alice, bob)
    source = pending_source(alice)
    thread_mute(user_id=uid(alice), thread_id=parent)
    assert push_due().get("skipped") == 1
    assert push_service.received == [] and line(alice, source).reason == "thread muted"


def test_nothing_is_pushed_in_the_readers_quiet_hours(alice_and_bob, push_service, manual_clock):
    """Quiet hours hold e-mail for one roll-up at their end; a push in them is not sent at all."""
    alice, bob = alice_and_bob
    subscribed(alice, push_service)
    now_hour = manual_clock.utcnow().hour
    alice.time_zone, alice.quiet_start, alice.quiet_end = "UTC", now_hour, (now_hour + 2) % 24
    alice.save()
    reply_to(alice, bob)
    source = pending_source(alice)
    assert push_due().get("skipped") == 1
    assert push_service.received == [] and line(alice, source).reason == "quiet hours"


def test_no_browser_is_skipped(alice_and_bob, push_service):
    alice, bob = alice_and_bob
    reply_to(alice, bob)
    source = pending_source(alice)
    assert push_due().get("skipped") == 1
    assert line(alice, source).reason == "no subscribed browser"


def test_past_its_ttl_it_is_skipped(alice_and_bob, push_service, manual_clock):
    alice, bob = alice_and_bob
    subscribed(alice, push_service)
    reply_to(alice, bob)
    source = pending_source(alice)
    manual_clock.advance(2 * 24 * 3600 + 1)
    assert push_due().get("skipped") == 1
    assert push_service.received == [] and line(alice, source).reason.startswith("expired")


@pytest.mark.parametrize("gone", [404, 410])
def test_a_gone_browser_is_forgotten_and_the_others_still_get_it(alice_and_bob, push_service, gone):
    alice, bob = alice_and_bob
    old = subscribed(alice, push_service, "old phone")
    new = subscribed(alice, push_service, "laptop")
    push_service.answer(old, gone)
    reply_to(alice, bob)
    source = pending_source(alice)
    assert push_due().get("sent") == 1
    assert [item.endpoint for item in PushSubscription.query(uid(alice))] == [new.endpoint]
    assert len(push_service.delivered(new)) == 1 and push_service.delivered(old) == []
    assert f"gone ({gone})" in line(alice, source).reason


@pytest.mark.parametrize("status", [429, 500, 503])
def test_throttled_or_failing_services_are_retried_with_backoff(alice_and_bob, push_service, manual_clock, status):
    alice, bob = alice_and_bob
    browser = subscribed(alice, push_service)
    push_service.answer(browser, status, status)
    reply_to(alice, bob)
    started = manual_clock.now()
    assert push_due().get("sent") == 1
    assert [one.status for one in push_service.received] == [status, status, 201]
    assert manual_clock.now() - started >= 2  # it waited between the tries (the manual clock moved)


def test_a_service_failing_every_try_fails_the_line(alice_and_bob, push_service):
    alice, bob = alice_and_bob
    browser = subscribed(alice, push_service)
    push_service.answer(browser, *[500] * PUSH_ATTEMPTS)
    reply_to(alice, bob)
    source = pending_source(alice)
    assert push_due().get("failed") == 1
    assert len(push_service.received) == PUSH_ATTEMPTS
    assert line(alice, source).state == "failed" and f"after {PUSH_ATTEMPTS} tries" in line(alice, source).reason
    assert push_due().get("failed") == 0  # not again


@pytest.mark.django_db(transaction=True)  # the threads read the accounts through their own connections
def test_concurrent_senders_push_once(alice_and_bob, push_service):
    alice, bob = alice_and_bob
    browser = subscribed(alice, push_service)
    reply_to(alice, bob)
    (item,) = mail_queue_due(channel=PUSH)
    outcomes = []
    barrier = threading.Barrier(4)

    def run(copy):
        barrier.wait()
        outcomes.append(push_process(item=copy))

    copies = [MailQueue.get(item.shard, item.mail_id, consistent_read=True) for _ in range(4)]
    threads = [threading.Thread(target=run, args=(copy,)) for copy in copies]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes).count("sent") == 1, outcomes
    assert len(push_service.delivered(browser)) == 1


def test_likes_push_with_the_comment_as_topic(make_user, push_service, manual_clock, settings, fold_by_the_worker):
    from tests.notifications.helpers import fold, like

    author, alice = make_user("author", display_name="Author"), make_user("alice", display_name="Alice")
    push_on(author, "like")
    browser = subscribed(author, push_service)
    from actions.comments import comment_create

    comment_id = comment_create(author_id=uid(author), body="Likeable").comment_id
    like(alice, comment_id)
    fold()
    assert push_due().get("sent") == 1
    (got,) = push_service.delivered(browser)
    assert got.payload["kind"] == "like" and got.payload["title"] == "Alice liked your comment"
    assert got.headers["urgency"] == "low" and got.headers["topic"] == push_topic(kind="like", entry_id=comment_id)
