"""The daily and weekly digests: the unread inbox, mailed once per period through the ledger."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.core import mail

from notifications.mail.digest import digest_period, digest_send_one, digests_send
from notifications.mail.selectors import EMAIL, ledger_get
from notifications.preferences.services import preferences_update
from project.clock import ManualClock, clock_override
from tests.notifications.mail_helpers import reply_to, uid, verified

pytestmark = pytest.mark.django_db

MONDAY_9 = "2026-11-23T09:00:00Z"


@pytest.fixture
def readers(make_user, settings):
    settings.NOTIFY_DIGEST_HOUR = 8
    settings.SITE_URL = "https://social.example"
    alice, bob = verified(make_user("alice")), make_user("bob")
    carol = verified(make_user("carol"))
    preferences_update(user_id=uid(alice), patch={"digest": "daily"})
    preferences_update(user_id=uid(carol), patch={"digest": "weekly"})
    return alice, bob, carol


def test_the_periods_and_when_they_are_due(settings):
    settings.NOTIFY_DIGEST_HOUR = 8
    at = datetime(2026, 11, 25, 7, 0, tzinfo=UTC)  # a Wednesday
    daily, weekly = digest_period(digest="daily", now=at), digest_period(digest="weekly", now=at)
    assert (daily.source, daily.due_at) == ("digest:daily:2026-11-25", datetime(2026, 11, 25, 8, tzinfo=UTC))
    assert (weekly.source, weekly.due_at) == ("digest:weekly:2026-W48", datetime(2026, 11, 23, 8, tzinfo=UTC))


def test_each_reader_gets_one_digest_per_period(readers):
    alice, bob, carol = readers
    reply_to(alice, bob, "First reply")
    reply_to(carol, bob, "Second reply")
    with clock_override(ManualClock.at(MONDAY_9)) as manual:
        digests_send()
        digests_send()  # again in the same period: nothing more
        assert sorted(message.to[0] for message in mail.outbox) == ["alice@example.com", "carol@example.com"]
        message = next(m for m in mail.outbox if m.to == ["alice@example.com"])
        assert message.subject == "1 unread notification on Dynamo Social"
        assert "First reply" in message.body and "https://social.example/c/" in message.body
        assert "/mail/unsubscribe/" in message.extra_headers["List-Unsubscribe"]
        assert ledger_get(user_id=uid(alice), channel=EMAIL, source="digest:daily:2026-11-23").state == "sent"

        manual.advance(24 * 3600)  # Tuesday: alice's next daily digest; carol's weekly one waits
        digests_send()
        assert sorted(message.to[0] for message in mail.outbox) == [
            "alice@example.com",
            "alice@example.com",
            "carol@example.com",
        ]


def test_nothing_unread_or_before_the_hour_sends_nothing(readers):
    with clock_override(ManualClock.at("2026-11-24T07:59:00Z")):
        reply_to(readers[0], readers[1])
        digests_send()
    assert mail.outbox == []
    with clock_override(ManualClock.at("2026-11-24T08:00:00Z")):
        from notifications.services import inbox_mark_all_read

        inbox_mark_all_read(user_id=uid(readers[0]))
        digests_send()
    assert mail.outbox == []


def test_two_senders_of_one_digest_send_it_once(readers):
    alice, bob, _ = readers
    reply_to(alice, bob)
    with clock_override(ManualClock.at(MONDAY_9)):
        period = digest_period(digest="daily", now=datetime(2026, 11, 23, 9, tzinfo=UTC))
        outcomes = [digest_send_one(user_id=uid(alice), period=period) for _ in range(2)]
    assert outcomes == ["sent", "already"]
    assert len(mail.outbox) == 1


def test_a_reader_without_a_verified_address_is_skipped_in_the_ledger(readers):
    alice, bob, _ = readers
    alice.email_verified = False
    alice.save()
    reply_to(alice, bob)
    with clock_override(ManualClock.at(MONDAY_9)):
        digests_send()
    assert mail.outbox == []
    line = ledger_get(user_id=uid(alice), channel=EMAIL, source="digest:daily:2026-11-23")
    assert (line.state, line.reason) == ("skipped", "e-mail address not verified")
