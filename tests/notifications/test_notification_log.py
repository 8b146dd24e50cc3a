"""GET /api/me/notification-log/ and /me/notifications/log/: per event and channel, what
happened and why."""

from __future__ import annotations

import time

import pytest
from django.test import Client
from django.urls import reverse

from actions.relations import relation_change
from notifications.models import Send
from notifications.preferences.services import preferences_update
from notifications.presence import presence_forget_memory
from notifications.services import inbox_mark_read, like_notifications_mark_read
from project.clock import ManualClock, clock_override
from tests.notifications.helpers import like, post
from tests.notifications.mail_helpers import email_on, newest_entry_id, reply_to, schedule, send_due, verified
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
    # newest first; both were in the inbox (one entry: the second reply rolled into the first's)
    assert [sorted(event["channels"]) for event in log] == [["email", "inbox"], ["email", "inbox", "push"]]
    newest, oldest = log
    assert newest["channels"]["email"]["outcome"] == "skipped"
    assert newest["channels"]["email"]["reason"] == "preference off"
    assert newest["channels"]["inbox"] == {**newest["channels"]["inbox"], "outcome": "sent", "detail": "unread"}
    assert oldest["text"].endswith("replied to your comment")
    assert {channel["outcome"] for channel in oldest["channels"].values()} == {"sent"}
    assert all(channel["reason"] == "" for channel in oldest["channels"].values())

    client.force_login(alice)
    page = client.get("/me/notifications/log/").content.decode()
    assert "preference off" in page and "Why you were notified, or not" in page and '<th scope="col">Inbox</th>' in page


def test_an_event_for_the_inbox_alone_is_listed_and_says_when_it_was_read(api, make_user):
    alice, bob = make_user("alice"), make_user("bob", display_name="Bob")
    reply_to(alice, bob)  # e-mail and push off (the defaults): the inbox alone
    (event,) = api.as_user(alice).get("/api/me/notification-log/").json()
    assert event["kind"] == "reply" and event["text"] == "Bob replied to your comment"
    assert event["channels"] == {"inbox": {**event["channels"]["inbox"], "outcome": "sent", "detail": "unread"}}
    inbox_mark_read(user_id=uid(alice), entry_ids=[newest_entry_id(alice)])
    (event,) = api.as_user(alice).get("/api/me/notification-log/").json()
    assert event["channels"]["inbox"]["detail"] == "read"


def test_a_like_for_the_inbox_alone_is_listed_and_says_when_it_was_read(api, make_user):
    alice, bob = make_user("alice"), make_user("bob", display_name="Bob")
    comment_id = post(alice)
    like(bob, comment_id)  # e-mail and push off (the defaults): the inbox alone
    (event,) = api.as_user(alice).get("/api/me/notification-log/").json()
    assert event["kind"] == "like" and event["text"] == "Bob liked your comment"
    assert event["channels"] == {"inbox": {**event["channels"]["inbox"], "outcome": "sent", "detail": "unread"}}
    like_notifications_mark_read(user_id=uid(alice), comment_ids=[comment_id])
    (event,) = api.as_user(alice).get("/api/me/notification-log/").json()
    assert event["kind"] == "like" and event["channels"]["inbox"]["detail"] == "read"


def test_a_block_before_the_push_says_retracted_for_inbox_and_push(api, make_user, push_service):
    alice, bob = make_user("alice"), make_user("bob", display_name="Bob")
    push_on(alice, "reply")
    subscribed(alice, push_service)
    reply_to(alice, bob)
    relation_change(owner_id=uid(alice), username="bob", kind="block", on=True)  # retracts the unread entry
    assert push_due().get("skipped") == 1 and push_service.received == []
    (event,) = api.as_user(alice).get("/api/me/notification-log/").json()
    assert event["channels"]["push"]["outcome"] == "skipped" and event["channels"]["push"]["reason"] == "retracted"
    assert event["channels"]["inbox"]["outcome"] == "skipped" and event["channels"]["inbox"]["reason"] == "retracted"


def test_kept_as_long_as_read_notifications(api, make_user, push_service, manual_clock, settings):
    settings.NOTIFICATION_READ_RETENTION_DAYS = 7
    alice, bob = make_user("alice"), make_user("bob")
    push_on(alice, "reply")
    subscribed(alice, push_service)
    reply_to(alice, bob)
    assert push_due().get("sent") == 1
    line = next(iter(Send.query(uid(alice))))
    assert int(line.expires_at.timestamp()) == int(manual_clock.now()) + 7 * 86400  # the table's TTL deletes it then
    assert api.as_user(alice).get("/api/me/notification-log/").json()
    manual_clock.advance(7 * 86400 + 60)  # past it, before TTL got to it: not shown
    assert api.as_user(alice).get("/api/me/notification-log/").json() == []


def test_only_your_own(api, make_user):
    assert api.get("/api/me/notification-log/").status_code == 401
    assert api.as_user(make_user("ann")).get("/api/me/notification-log/").json() == []


def test_staff_see_any_persons_log_linked_from_their_user_page(make_user, push_service):
    alice, bob = make_user("alice"), make_user("bob", display_name="Bob")
    push_on(alice, "reply")
    reply_to(alice, bob)  # no browser subscribed: push skipped
    assert push_due().get("skipped") == 1
    staff = Client()
    boss = make_user("boss", is_staff=True)
    boss.is_superuser = True  # may view users
    boss.save()
    staff.force_login(boss)

    user_page = staff.get(reverse("admin:social_user_change", args=[alice.pk])).content.decode()
    log_url = reverse("admin:dynamo-notification-log") + "?username=alice"
    assert f'href="{log_url}"' in user_page

    page = staff.get(log_url).content.decode()
    assert "alice (id" in page and "Bob replied to your comment" in page
    assert "<strong>skipped</strong>: no browser subscribed" in page and "<strong>sent</strong>" in page  # push, inbox
    assert (
        "No user named" in staff.get(reverse("admin:dynamo-notification-log"), {"username": "nobody"}).content.decode()
    )
    assert Client().get(log_url).status_code == 302  # not staff: the admin's log-in
