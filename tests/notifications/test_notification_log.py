"""GET /api/me/notification-log/ and /me/notifications/log/: per event and channel, what
happened and why."""

from __future__ import annotations

import time

import pytest

from notifications.preferences.services import preferences_update
from notifications.presence import presence_forget_memory
from project.clock import ManualClock, clock_override
from tests.notifications.mail_helpers import email_on, reply_to, schedule, send_due, verified
from tests.notifications.push_helpers import push_due, push_on, subscribed, uid

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def manual_clock():
    presence_forget_memory()
    with clock_override(ManualClock(start=time.time())) as manual:
        yield manual


def test_each_event_says_per_channel_what_happened_and_why(api, make_user, push_service, client, manual_clock):
    alice = verified(make_user("alice", display_name="Alice"))
    bob, carol = make_user("bob", display_name="Bob"), make_user("carol", display_name="Carol")
    email_on(alice, "reply")
    push_on(alice, "reply")
    subscribed(alice, push_service)
    reply_to(alice, bob, "First")
    assert push_due().get("sent") == 1
    schedule(alice)
    assert send_due().get("sent") == 1
    preferences_update(user_id=uid(alice), patch={"kinds": {"reply": {"push": False}}})
    manual_clock.advance(60)  # a minute later: the newer event
    reply_to(alice, carol, "Second")  # push now off: not even scheduled; e-mail checked at send time
    preferences_update(user_id=uid(alice), patch={"kinds": {"reply": {"email": False}}})
    schedule(alice)
    assert send_due().get("skipped") == 1

    log = api.as_user(alice).get("/api/me/notification-log/").json()
    assert [sorted(event["channels"]) for event in log] == [["email"], ["email", "push"]]  # newest first
    newest, oldest = log
    assert newest["channels"]["email"]["outcome"] == "skipped"
    assert newest["channels"]["email"]["reason"] == "preference off"
    assert oldest["text"].endswith("replied to your comment")
    assert {channel["outcome"] for channel in oldest["channels"].values()} == {"sent"}
    assert all(channel["reason"] == "" for channel in oldest["channels"].values())

    client.force_login(alice)
    page = client.get("/me/notifications/log/").content.decode()
    assert "preference off" in page and "Why you were notified, or not" in page


def test_only_your_own(api, make_user):
    assert api.get("/api/me/notification-log/").status_code == 401
    assert api.as_user(make_user("ann")).get("/api/me/notification-log/").json() == []
