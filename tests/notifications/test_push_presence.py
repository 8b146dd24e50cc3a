"""Quiet while present: a person whose page polled within NOTIFY_PRESENT_SECONDS gets no push and
no e-mail yet; read meanwhile, none at all; gone from the page, the push goes."""

from __future__ import annotations

import time

import pytest
from django.core import mail

from notifications.mail.queue import PUSH
from notifications.mail.selectors import ledger_get, mail_queue_due
from notifications.models import Presence
from notifications.presence import presence_forget_memory
from notifications.services import inbox_mark_read
from project.clock import ManualClock, clock_override
from tests.notifications.mail_helpers import email_on, newest_entry_id, reply_to, schedule, send_due, verified
from tests.notifications.push_helpers import push_due, push_on, subscribed, uid

pytestmark = pytest.mark.django_db


@pytest.fixture
def manual_clock(settings):
    settings.NOTIFY_PRESENT_SECONDS = 60
    presence_forget_memory()
    with clock_override(ManualClock(start=time.time())) as manual:
        yield manual
    presence_forget_memory()


@pytest.fixture
def alice_online(make_user, push_service, manual_clock, api):
    alice, bob = make_user("alice", display_name="Alice"), make_user("bob", display_name="Bob")
    push_on(alice, "reply")
    browser = subscribed(alice, push_service)
    assert api.as_user(alice).get("/api/live/").status_code == 200  # her open page polls
    return alice, bob, browser


def test_a_poll_marks_presence_at_most_every_third_of_the_window(api, make_user, manual_clock):
    ann = make_user("ann")
    client = api.as_user(ann)
    client.get("/api/live/")
    first = int(Presence.get(uid(ann), consistent_read=True).seen_at)
    manual_clock.advance(5)
    client.get("/api/live/")
    assert int(Presence.get(uid(ann), consistent_read=True).seen_at) == first  # not a write per poll
    manual_clock.advance(20)
    client.get("/api/live/")
    assert int(Presence.get(uid(ann), consistent_read=True).seen_at) == first + 25_000


def test_present_the_push_waits_and_read_meanwhile_it_never_goes(alice_online, push_service, manual_clock):
    alice, bob, _ = alice_online
    reply_to(alice, bob)
    (item,) = mail_queue_due(channel=PUSH)
    assert push_due().get("postponed") == 1
    assert push_service.received == [] and mail_queue_due(channel=PUSH) == []
    inbox_mark_read(user_id=uid(alice), entry_ids=[newest_entry_id(alice)])
    manual_clock.advance(61)
    assert push_due().get("skipped") == 1
    assert push_service.received == []
    assert ledger_get(user_id=uid(alice), channel=PUSH, source=item.source).reason == "read before send"


def test_gone_from_the_page_the_unread_push_goes(alice_online, push_service, manual_clock):
    alice, bob, browser = alice_online
    reply_to(alice, bob)
    assert push_due().get("postponed") == 1
    manual_clock.advance(61)  # no poll since: she left
    assert push_due().get("sent") == 1
    assert len(push_service.delivered(browser)) == 1


def test_present_the_mail_waits_too(make_user, manual_clock, api):
    alice, bob = verified(make_user("alice", display_name="Alice")), make_user("bob", display_name="Bob")
    email_on(alice, "reply")
    api.as_user(alice).get("/api/live/")
    reply_to(alice, bob)
    schedule(alice)
    assert send_due().get("postponed") == 1 and mail.outbox == []
    manual_clock.advance(61)
    assert send_due().get("sent") == 1


def test_off_with_zero(alice_online, push_service, settings):
    settings.NOTIFY_PRESENT_SECONDS = 0
    alice, bob, _ = alice_online
    reply_to(alice, bob)
    assert push_due().get("sent") == 1
