"""The digest at each reader's local hour, in their language, across daylight-saving changes:
once a local day, never twice, never none, within 15 minutes after the hour (the clock is set)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.core import mail

from notifications.mail.digest import digest_period, digests_send
from notifications.preferences.services import preferences_update
from project.clock import ManualClock, clock_override
from tests.notifications.mail_helpers import reply_to, uid, verified

pytestmark = pytest.mark.django_db

WARSAW = ZoneInfo("Europe/Warsaw")


def _reader(make_user, name: str, *, zone: str, hour: int | None, locale: str = ""):
    reader = verified(make_user(name, display_name=name.capitalize()))
    reader.time_zone, reader.digest_hour, reader.locale = zone, hour, locale
    reader.save()
    preferences_update(user_id=uid(reader), patch={"digest": "daily"})
    return reader


def _run_days(start: str, days: int, *, keep_unread) -> list[tuple[str, datetime]]:
    """Passes every 5 minutes from `start` for `days` days; (address, sent at) of each mail."""
    sent: list[tuple[str, datetime]] = []
    manual = ManualClock.at(start)
    with clock_override(manual):
        for _ in range(days * 24 * 12):
            before = len(mail.outbox)
            digests_send()
            for message in mail.outbox[before:]:
                sent.append((message.to[0], manual.utcnow()))
                keep_unread()  # something new and unread for the next day's digest
            manual.advance(300)
    return sent


@pytest.mark.parametrize(
    "start",
    ["2027-03-27T00:00:00Z", "2027-10-30T00:00:00Z"],  # Warsaw springs forward on 28 March, falls back on 31 October
    ids=["spring", "autumn"],
)
@pytest.mark.parametrize("hour", [2, 8])  # 02:00 is skipped in spring and happens twice in autumn
def test_one_digest_a_local_day_at_the_local_hour_across_the_clock_change(make_user, settings, start, hour):
    settings.SITE_URL = "https://social.example"
    reader, bob = _reader(make_user, "ola", zone="Europe/Warsaw", hour=hour), make_user("bob")
    reply_to(reader, bob)
    sent = _run_days(start, 3, keep_unread=lambda: reply_to(reader, bob))
    local_days = [at.astimezone(WARSAW).date() for _address, at in sent]
    assert len(local_days) == len(set(local_days)) == 3, sent  # one a day: none doubled, none missed
    for _address, at in sent:
        due = digest_period(digest="daily", now=at, zone=WARSAW, hour=hour).due_at
        assert timedelta(0) <= at - due <= timedelta(minutes=15), (at, due)
        local = at.astimezone(WARSAW)
        if not (hour == 2 and local.date().isoformat() == "2027-03-28"):  # the skipped hour leaves at 03:00
            assert local.hour == hour and local.minute <= 15, local


def test_each_reader_at_their_own_hour_and_in_their_own_language(make_user, settings):
    settings.SITE_URL = "https://social.example"
    settings.NOTIFY_DIGEST_HOUR = 8
    tokyo = _reader(make_user, "yuki", zone="Asia/Tokyo", hour=None, locale="ja")  # 08:00 JST = 23:00 UTC
    warsaw = _reader(make_user, "ola", zone="Europe/Warsaw", hour=7, locale="pl")  # 07:00 CET = 06:00 UTC
    site = _reader(make_user, "sam", zone="", hour=None)  # the site's zone (UTC): 08:00 UTC
    bob = make_user("bob", display_name="Bob")
    for reader in (tokyo, warsaw, site):
        reply_to(reader, bob)
    sent = _run_days("2026-11-24T12:00:00Z", 1, keep_unread=lambda: None)
    times = dict(sent)
    assert times == {
        "yuki@example.com": datetime(2026, 11, 24, 23, 0, tzinfo=UTC),
        "ola@example.com": datetime(2026, 11, 25, 6, 0, tzinfo=UTC),
        "sam@example.com": datetime(2026, 11, 25, 8, 0, tzinfo=UTC),
    }
    subjects = {message.to[0]: message.subject for message in mail.outbox}
    assert subjects["yuki@example.com"] == "Dynamo Socialに未読の通知が1件あります"
    assert subjects["ola@example.com"] == "1 nieprzeczytane powiadomienie w Dynamo Social"
    body = next(message.body for message in mail.outbox if message.to == ["ola@example.com"])
    assert "Bob odpowiada na Twój komentarz" in body
