"""The notification mail sender: re-checks at send time, the ledger, exactly once."""

from __future__ import annotations

import threading

import pytest
from django.core import mail

from notifications.mail.selectors import (
    EMAIL,
    UNKNOWN,
    ledger_get,
    ledger_of_user,
    ledger_outcome,
    mail_queue_due,
)
from notifications.mail.services import ledger_put, mail_process
from notifications.models import MailQueue
from notifications.preferences.services import preferences_update, thread_mute
from notifications.services import inbox_mark_read
from project.clock import ManualClock, clock, clock_override
from project.limits.store import limit_forget, limits_forget_memory
from tests.notifications.mail_helpers import email_on, newest_entry_id, reply_to, schedule, send_due, uid, verified

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice_and_bob(make_user, settings):
    settings.SITE_URL = "https://social.example"
    alice = verified(make_user("alice", display_name="Alice"))
    bob = make_user("bob", display_name="Bob")
    email_on(alice, "reply")
    return alice, bob


def test_an_unread_reply_is_mailed_once_with_its_link_and_unsubscribe_headers(alice_and_bob):
    alice, bob = alice_and_bob
    parent, reply = reply_to(alice, bob, "Nice point about caching")
    source = schedule(alice)

    assert send_due().get("sent") == 1
    assert send_due().get("sent") == 0  # nothing due any more

    assert len(mail.outbox) == 1
    message = mail.outbox[0]
    assert message.to == ["alice@example.com"]
    assert message.subject == "\u201cBob\u201d replied to your comment"
    assert "Nice point about caching" in message.body
    assert f"https://social.example/c/{parent}/#c-{reply}" in message.body
    unsubscribe = message.extra_headers["List-Unsubscribe"]
    assert unsubscribe.startswith("<https://social.example/mail/unsubscribe/") and unsubscribe.endswith("/>")
    assert message.extra_headers["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
    (html, mimetype) = message.alternatives[0]
    assert mimetype == "text/html" and "Nice point about caching" in html
    line = ledger_get(user_id=uid(alice), channel=EMAIL, source=source)
    assert line.state == "sent" and line.address == "alice@example.com"
    assert MailQueue.count() == 0


def test_read_before_it_is_due_sends_nothing(alice_and_bob):
    alice, bob = alice_and_bob
    reply_to(alice, bob)
    source = schedule(alice)
    entry_id = newest_entry_id(alice)
    inbox_mark_read(user_id=uid(alice), entry_ids=[entry_id])

    assert send_due().get("skipped") == 1
    assert mail.outbox == []
    ledger_entry = ledger_get(user_id=uid(alice), channel=EMAIL, source=source)
    assert ledger_entry.state == "skipped" and "read" in ledger_entry.reason


def test_email_turned_off_or_thread_muted_by_send_time_sends_nothing(alice_and_bob, make_user):
    alice, bob = alice_and_bob
    carol = verified(make_user("carol"))
    email_on(carol, "reply")
    reply_to(alice, bob)
    schedule(alice)
    parent, _ = reply_to(carol, bob)
    schedule(carol)
    preferences_update(user_id=uid(alice), patch={"kinds": {"reply": {"email": False}}})
    thread_mute(user_id=uid(carol), thread_id=parent)

    assert send_due().get("skipped") == 2
    assert mail.outbox == []
    reasons = {
        line.user_id: line.reason for line in ledger_of_user(user_id=uid(alice)) + ledger_of_user(user_id=uid(carol))
    }
    assert reasons == {uid(alice): "e-mail for reply turned off", uid(carol): "thread muted"}


def test_an_unverified_address_gets_nothing(alice_and_bob, make_user):
    alice, bob = alice_and_bob
    alice.email_verified = False
    alice.save()
    reply_to(alice, bob)
    schedule(alice)

    assert send_due().get("skipped") == 1
    assert mail.outbox == []
    assert ledger_of_user(user_id=uid(alice))[0].reason == "e-mail address not verified"


def test_not_due_yet_waits(alice_and_bob):
    alice, bob = alice_and_bob
    reply_to(alice, bob)
    schedule(alice, due_ms=clock.now_ms() + 600_000)
    assert mail_queue_due() == []
    assert send_due().get("sent") == 0


@pytest.mark.django_db(transaction=True)  # the senders' threads read the accounts on their own connections
def test_two_concurrent_senders_send_once(alice_and_bob, make_user):
    alice, bob = alice_and_bob
    people = [alice] + [verified(make_user(f"p{n}")) for n in range(5)]
    for person in people[1:]:
        email_on(person, "reply")
    for person in people:
        reply_to(person, bob)
        schedule(person)
    due = mail_queue_due()
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def sender() -> None:
        barrier.wait()
        for item in due:  # both see every item: each races the other for all of them
            try:
                current = MailQueue.get(item.shard, item.mail_id, consistent_read=True)
            except MailQueue.DoesNotExist:  # the other sender already sent it and took it off the queue
                outcomes.append("gone")
                continue
            outcomes.append(mail_process(item=current))

    threads = [threading.Thread(target=sender) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    by_recipient = sorted(message.to[0] for message in mail.outbox)
    assert by_recipient == sorted(f"{person.username}@example.com" for person in people)
    assert outcomes.count("sent") == len(people)


def test_the_ledger_claim_lets_one_of_two_senders_through(alice_and_bob):
    """Two senders holding the same item (a lease that ran out under a slow one): the ledger decides."""
    alice, bob = alice_and_bob
    reply_to(alice, bob)
    source = schedule(alice)
    item = mail_queue_due()[0]
    first = ledger_put(user_id=uid(alice), source=source, kind="reply", state="sending")
    assert first is not None
    assert ledger_put(user_id=uid(alice), source=source, kind="reply", state="sending") is None
    # The sender of `first` died before marking: the queue item comes up again and is not sent.
    assert mail_process(item=item) == "already"
    assert mail.outbox == []
    assert MailQueue.count() == 0


def test_a_crash_between_claim_and_mark_reads_unknown_after_the_lease(alice_and_bob, settings):
    alice, bob = alice_and_bob
    settings.MAIL_LEASE_SECONDS = 60
    reply_to(alice, bob)
    source = schedule(alice)
    with clock_override(ManualClock(clock.now())) as manual:
        line = ledger_put(user_id=uid(alice), source=source, kind="reply", state="sending")
        assert ledger_outcome(line) == "sending"
        manual.advance(61)
        assert ledger_outcome(ledger_get(user_id=uid(alice), channel=EMAIL, source=source)) == UNKNOWN
        assert [line.outcome for line in ledger_of_user(user_id=uid(alice))] == [UNKNOWN]
        assert send_due().get("already") == 1
    assert mail.outbox == []


def test_a_failed_send_is_recorded_and_not_retried(alice_and_bob, monkeypatch):
    alice, bob = alice_and_bob
    reply_to(alice, bob)
    source = schedule(alice)

    def refuse(self, *args, **kwargs):
        raise ConnectionRefusedError("smtp down")

    monkeypatch.setattr("django.core.mail.EmailMessage.send", refuse)
    assert send_due().get("failed") == 1
    line = ledger_get(user_id=uid(alice), channel=EMAIL, source=source)
    assert line.state == "failed" and "smtp down" in line.reason
    assert MailQueue.count() == 0


def test_the_recipient_limit_skips_and_the_site_limit_postpones(alice_and_bob, settings):
    alice, bob = alice_and_bob
    settings.MAIL_LIMIT_RECIPIENT = "1/hour"
    for _ in range(2):
        reply_to(alice, bob)
        schedule(alice)
    stats = send_due()
    assert (stats.get("sent"), stats.get("skipped")) == (1, 1)
    assert any("per-recipient" in line.reason for line in ledger_of_user(user_id=uid(alice)))

    settings.MAIL_LIMIT_RECIPIENT = "100/hour"
    limits_forget_memory()  # this process remembers the denial above until its window ends
    settings.MAIL_LIMIT_SITE = "1/hour"
    limit_forget(name="mail_site", subject="site", rules="1/hour")  # in the first hour of a day: the mail above
    sources = []
    for _ in range(2):
        reply_to(alice, bob)
        sources.append(schedule(alice))
    stats = send_due()
    assert (stats.get("sent"), stats.get("postponed")) == (1, 1)
    waiting = [source for source in sources if ledger_get(user_id=uid(alice), channel=EMAIL, source=source) is None]
    assert len(waiting) == 1  # its line was taken back: it goes once the site's window allows
    assert MailQueue.count() == 1 and mail_queue_due() == []


def test_an_unread_like_notification_is_mailed_and_a_read_one_is_not(make_user, settings):
    from tests.notifications.helpers import fold, like, post

    settings.LIKE_FOLD_AFTER_RESPONSE = False
    author = verified(make_user("author", display_name="Author"))
    email_on(author, "like")
    alice = make_user("alice", display_name="Alice")
    comment_id = post(author, "Worth a like")
    like(alice, comment_id)
    fold()
    source = schedule(author, kind="like", entry_id=comment_id)

    assert send_due().get("sent") == 1
    (message,) = mail.outbox
    assert message.subject == "\u201cAlice\u201d liked your comment"
    assert "Worth a like" in message.body and f"/c/{comment_id}/" in message.body
    assert ledger_get(user_id=uid(author), channel=EMAIL, source=source).kind == "like"

    other = post(author, "Another")
    like(alice, other)
    schedule(author, kind="like", entry_id=other)
    from notifications.services import like_notifications_mark_read

    like_notifications_mark_read(user_id=uid(author), comment_ids=[other])
    assert send_due().get("skipped") == 1
    assert len(mail.outbox) == 1


def test_replies_rolled_up_into_one_unread_entry_make_one_mail(alice_and_bob, make_user):
    alice, bob = alice_and_bob
    carol = make_user("carol", display_name="Carol")
    from actions.comments import comment_create

    parent, _ = reply_to(alice, bob, "First")
    entry_id = newest_entry_id(alice)
    schedule(alice)
    comment_create(author_id=uid(carol), body="Second", parent_id=parent)
    assert newest_entry_id(alice) == entry_id  # rolled into the same unread entry
    schedule(alice, entry_id=entry_id, source=f"second:{parent}")

    stats = send_due()
    assert (stats.get("sent"), stats.get("skipped")) == (1, 1)
    (message,) = mail.outbox
    assert message.subject == "\u201cCarol\u201d and \u201cBob\u201d replied to your comment"
    assert [line.reason for line in ledger_of_user(user_id=uid(alice)) if line.outcome == "skipped"] == [
        "already e-mailed about this notification (still unread)"
    ]


def test_an_outage_before_the_send_gives_the_line_back_and_the_mail_goes_later(alice_and_bob, monkeypatch):
    alice, bob = alice_and_bob
    reply_to(alice, bob)
    source = schedule(alice)
    item = mail_queue_due()[0]

    def unreachable(**kwargs):
        raise ConnectionError("DynamoDB does not answer")

    monkeypatch.setattr("notifications.mail.services.limit_hit", unreachable)
    with pytest.raises(ConnectionError):
        mail_process(item=item)
    assert ledger_get(user_id=uid(alice), channel=EMAIL, source=source) is None
    monkeypatch.undo()

    item = MailQueue.get(item.shard, item.mail_id, consistent_read=True)
    item.update(actions=[MailQueue.due_at.set(clock.now_ms())])  # its lease ran out
    assert send_due().get("sent") == 1
    assert len(mail.outbox) == 1


def test_a_name_stored_with_a_bidi_override_is_quoted_and_cleaned_in_the_subject(alice_and_bob):
    """A name kept from before format characters were refused cannot turn the subject around:
    the subject quotes it without them."""
    alice, bob = alice_and_bob
    bob.display_name = "\u202eboB"  # as stored before: written directly
    bob.save(update_fields=["display_name"])
    reply_to(alice, bob, "Nice point")
    schedule(alice)
    assert send_due().get("sent") == 1
    (message,) = mail.outbox
    assert message.subject == "\u201cboB\u201d replied to your comment"
