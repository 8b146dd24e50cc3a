"""Quiet hours: no e-mail in them; what fell in them comes as one mail when they end, in the
recipient's language, listing only what is still unread."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.core import mail

from notifications.mail.checks import Recipient
from notifications.mail.quiet import quiet_until
from project.clock import ManualClock, clock_override
from tests.notifications.mail_helpers import email_on, reply_to, schedule, send_due, verified

pytestmark = pytest.mark.django_db


def _recipient(start, end, zone="Europe/Warsaw"):
    return Recipient("1", "ola", "Ola", "ola@example.com", time_zone=zone, quiet_start=start, quiet_end=end)


@pytest.mark.parametrize(
    ("now", "start", "end", "until"),
    [
        ("2026-11-24T21:30:00Z", 22, 7, "2026-11-25T06:00:00Z"),  # 22:30 in Warsaw (UTC+1): until 07:00
        ("2026-11-25T05:59:00Z", 22, 7, "2026-11-25T06:00:00Z"),  # 06:59
        ("2026-11-25T06:00:00Z", 22, 7, None),  # 07:00: over
        ("2026-11-24T20:59:00Z", 22, 7, None),  # 21:59: not yet
        ("2026-11-24T12:30:00Z", 13, 15, "2026-11-24T14:00:00Z"),  # within one day
        ("2026-11-24T12:30:00Z", 9, 9, None),  # start == end: no quiet hours
        ("2027-03-28T00:30:00Z", 0, 3, "2027-03-28T01:00:00Z"),  # 03:00 CEST: the hour after the skipped one
    ],
)
def test_when_quiet_hours_end(now, start, end, until):
    at = datetime.fromisoformat(now.replace("Z", "+00:00"))
    expected = datetime.fromisoformat(until.replace("Z", "+00:00")) if until else None
    assert quiet_until(recipient=_recipient(start, end), now=at) == expected


def test_what_falls_in_quiet_hours_comes_as_one_mail_when_they_end(make_user, settings):
    settings.SITE_URL = "https://social.example"
    ola = verified(make_user("ola", display_name="Ola"))
    ola.time_zone, ola.quiet_start, ola.quiet_end, ola.locale = "Europe/Warsaw", 22, 7, "pl"
    ola.save()
    email_on(ola, "reply")
    bob, eve = make_user("bob", display_name="Bob"), make_user("eve", display_name="Eve")
    manual = ManualClock.at("2026-11-24T22:00:00Z")  # 23:00 in Warsaw
    with clock_override(manual):
        reply_to(ola, bob, "Late reply")
        reply_to(ola, eve, "Later reply")
        manual.advance(settings.NOTIFY_EMAIL_DELAY)  # both mails due at 23:10
        stats = send_due()
        assert (stats.get("sent"), stats.get("skipped")) == (0, 2) and mail.outbox == [], stats.summary
        manual.advance(8 * 3600 - settings.NOTIFY_EMAIL_DELAY - 60)  # 06:59 in Warsaw: still quiet
        assert send_due().get("sent") == 0
        manual.advance(60)  # 07:00
        assert send_due().get("sent") == 1
        assert send_due().get("sent") == 0
    (message,) = mail.outbox
    assert message.subject == "Gdy trwały godziny ciszy: 2 nieprzeczytane powiadomienia"
    assert "Bob odpowiada na Twój komentarz" in message.body and "Eve odpowiada na Twój komentarz" in message.body


def test_outside_quiet_hours_mail_goes_at_once(make_user, settings):
    settings.SITE_URL = "https://social.example"
    ola = verified(make_user("ola", display_name="Ola"))
    ola.time_zone, ola.quiet_start, ola.quiet_end = "Europe/Warsaw", 22, 7
    ola.save()
    email_on(ola, "reply")
    with clock_override(ManualClock.at(datetime(2026, 11, 24, 12, tzinfo=UTC).isoformat())):
        reply_to(ola, make_user("bob", display_name="Bob"))
        schedule(ola)
        assert send_due().get("sent") == 1
