"""The digest pass reads only the readers whose local digest hour may fall on its quarter hour
(their slot of the `digest` index), a reader's slot follows their time zone, and a reader
listed under an older or stale key is moved to theirs by the pass that reads every slot, and
still gets that day's digest."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.core import mail

from notifications.mail import digest as digest_module
from notifications.mail.digest import digests_send
from notifications.models import Preferences
from notifications.preferences.digest_slots import digest_slot, due_slots
from notifications.preferences.services import preferences_update
from project.clock import ManualClock, clock_override
from social.account.language import user_language_set
from tests.notifications.mail_helpers import reply_to, uid, verified

pytestmark = pytest.mark.django_db

ZONES = ("Asia/Tokyo", "Europe/Warsaw", "America/New_York", "UTC")


def _reader(make_user, name: str, zone: str):
    reader = verified(make_user(name))
    reader.time_zone, reader.digest_hour = zone, 8
    reader.save()
    preferences_update(user_id=uid(reader), patch={"digest": "daily"})
    return reader


@pytest.fixture
def read_rows(monkeypatch):
    """The user ids whose rows each pass reads (what the pass looks at)."""
    seen: list[str] = []
    real = digest_module.recipients_get

    def spy(*, user_ids):
        seen.extend(user_ids)
        return real(user_ids=user_ids)

    monkeypatch.setattr(digest_module, "recipients_get", spy)
    return seen


def test_the_slots_of_a_zone_across_its_clock_changes():
    assert digest_slot(time_zone="Asia/Tokyo", hour=8) == "23:00"
    assert digest_slot(time_zone="Europe/Warsaw", hour=8) == "07:00"  # the winter offset
    assert digest_slot(time_zone="Asia/Kathmandu", hour=8) == "02:15"
    winter = due_slots(datetime(2026, 12, 2, 7, 0, tzinfo=UTC))
    summer = due_slots(datetime(2026, 7, 2, 6, 0, tzinfo=UTC))  # 08:00 in Warsaw in summer
    assert "07:00" in winter and "07:00" in summer
    assert len(winter) <= 6 and len(summer) <= 6  # a few slots (the zones' shifts), not the day's 96


def test_a_pass_reads_only_the_readers_whose_hour_may_be_due(make_user, settings, read_rows):
    settings.SITE_URL = "https://social.example"
    readers = [_reader(make_user, f"r{n}", ZONES[n % len(ZONES)]) for n in range(8)]
    tokyo = sorted(uid(reader) for reader in readers if reader.time_zone == "Asia/Tokyo")
    with clock_override(ManualClock.at("2026-12-02T03:00:00Z")) as manual:
        digests_send()  # the first pass after a gap reads every reader
        read_rows.clear()
        manual.advance(15 * 60)
        digests_send()  # 03:15 UTC: nobody's 08:00
        assert read_rows == []
    with clock_override(ManualClock.at("2026-12-02T22:45:00Z")) as manual:
        digests_send()
        read_rows.clear()
        manual.advance(15 * 60)
        digests_send()  # 23:00 UTC: 08:00 in Tokyo
        assert sorted(read_rows) == tokyo


def test_a_readers_slot_follows_their_time_zone(make_user, django_capture_on_commit_callbacks):
    reader = _reader(make_user, "ola", "UTC")
    assert Preferences.get(uid(reader)).digest_key == "daily#08:00"
    with django_capture_on_commit_callbacks(execute=True):
        user_language_set(user=reader, changes={"time_zone": "Asia/Tokyo"})
    assert Preferences.get(uid(reader)).digest_key == "daily#23:00"
    with django_capture_on_commit_callbacks(execute=True):
        user_language_set(user=reader, changes={"digest_hour": 9})
    assert Preferences.get(uid(reader)).digest_key == "daily#00:00"


def test_a_reader_under_an_older_key_is_moved_and_gets_that_days_digest(make_user, settings):
    settings.SITE_URL = "https://social.example"
    reader, bob = _reader(make_user, "ola", "Asia/Tokyo"), make_user("bob")
    Preferences(uid(reader)).update(actions=[Preferences.digest_key.set("daily#2")])  # listed as before slots
    reply_to(reader, bob)
    with clock_override(ManualClock.at("2026-12-02T22:45:00Z")) as manual:
        digests_send()  # reads every reader (no pass before): moves them; 07:45 in Tokyo, not due
        assert Preferences.get(uid(reader)).digest_key == "daily#23:00" and mail.outbox == []
        manual.advance(15 * 60)
        digests_send()
        assert [message.to[0] for message in mail.outbox] == [reader.email]
