"""Web Push in Chromium: a person turns push on through the settings page (permission granted by
the test, asked only on the click), a reply is pushed by the sender to the local push-service
stand-in, the push is delivered to the page's service worker through the DevTools protocol
(`ServiceWorker.deliverPushMessage`), the notification is shown, and a `notificationclick` of
that very notification, dispatched in the worker, marks the entry read and opens it.

This machine cannot reach a browser vendor's push service, so `PushManager.subscribe` is
replaced (before any page script runs) by one answering a subscription of the stand-in's: the
real `pushManager` of the real service worker registration otherwise, and the payload that
reaches the worker is the one the stand-in decrypted with that subscription's keys.
"""

from __future__ import annotations

import json
import time

from playwright.sync_api import expect

from actions.comments import comment_create
from notifications.feed.selectors import feed_read
from notifications.models import PushSubscription
from notifications.preferences.selectors import preferences_get
from project.testing.harness import wait_for
from tests.browser.conftest import DESKTOP
from tests.notifications.push_helpers import push_due, push_service  # noqa: F401  (a fixture)

FAKE_SUBSCRIBE = """
(subscription) => {
  const fake = { endpoint: subscription.endpoint, toJSON: () => subscription,
                 unsubscribe: () => Promise.resolve(true) };
  let held = null;
  PushManager.prototype.subscribe = function () { held = fake; return Promise.resolve(fake); };
  PushManager.prototype.getSubscription = function () { return Promise.resolve(held); };
}
"""


def _delivered_until_shown(page, cdp, *, site: str, registrations, payload: dict) -> list[dict]:
    """Deliver the push to the worker through the DevTools protocol until its notification shows
    (the notifications shown). A delivery the browser drops (its worker busy starting on a busy
    machine) is delivered again: the same tag, so a second delivery replaces, never adds."""
    shown_script = (
        "() => navigator.serviceWorker.ready.then(r => r.getNotifications())"
        ".then(ns => ns.map(n => ({title: n.title, body: n.body, tag: n.tag})))"
    )
    deadline = time.monotonic() + 90
    while True:
        for registration in registrations():
            message = {"origin": site, "registrationId": registration, "data": json.dumps(payload)}
            cdp.send("ServiceWorker.deliverPushMessage", message)
        try:
            return wait_for(lambda: page.evaluate(shown_script), what="the notification", seconds=15)
        except AssertionError:
            if time.monotonic() > deadline:
                raise


def test_push_reaches_the_service_worker_and_its_click_opens_the_entry(pages, make_user, push_service, site, settings):  # noqa: F811
    # Bob's settings tab stays open through the journey, which makes him present: his push would
    # wait (tests/notifications/test_push_presence.py). Here it goes at once.
    settings.NOTIFY_PRESENT_SECONDS = 0
    bob = make_user("bob", display_name="Bob")
    alice = make_user("alice", display_name="Alice")
    browser_subscription = push_service.subscribe()
    page = pages.open("", user=bob, viewport=DESKTOP)
    page.context.grant_permissions(["notifications"], origin=site)
    page.context.add_init_script(f"({FAKE_SUBSCRIBE})({json.dumps(browser_subscription.to_json())})")
    page.goto("/me/notifications/")

    expect(page.get_by_text("Push is off in this browser.")).to_be_visible()
    assert PushSubscription.count(str(bob.pk)) == 0  # nothing asked or sent on load
    page.get_by_role("button", name="Turn on push in this browser").click()
    expect(page.get_by_text("Push is on in this browser.")).to_be_visible()
    (stored,) = PushSubscription.query(str(bob.pk))
    assert stored.endpoint == browser_subscription.endpoint
    page.get_by_label("Replies to your comments, and in threads you watch: Push").check()
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Saved: your notification settings.")).to_be_visible()
    assert preferences_get(user_id=str(bob.pk), consistent=True).wants("reply", "push")

    parent = comment_create(author_id=str(bob.pk), body="Caching is hard").comment_id
    reply = comment_create(author_id=str(alice.pk), body="Not with DynamoDB", parent_id=parent).comment_id
    assert push_due().get("sent") == 1
    (received,) = push_service.delivered(browser_subscription)
    assert received.payload["title"] == "Alice replied to your comment"

    # The registration to push to: the site's, not deleted, whose push worker is activated (a
    # push handed to a worker still installing, or to a registration gone, is dropped).
    cdp = page.context.new_cdp_session(page)
    deleted: dict[str, bool] = {}
    activated: set[str] = set()
    cdp.on(
        "ServiceWorker.workerRegistrationUpdated",
        lambda event: deleted.update(
            (one["registrationId"], one.get("isDeleted", False))
            for one in event["registrations"]
            if one["scopeURL"] == f"{site}/"
        ),
    )
    cdp.on(
        "ServiceWorker.workerVersionUpdated",
        lambda event: activated.update(
            version["registrationId"]
            for version in event["versions"]
            if version["scriptURL"].endswith("/push-worker.js") and version["status"] == "activated"
        ),
    )
    cdp.send("ServiceWorker.enable")
    live = lambda: [one for one in activated if deleted.get(one) is False]  # noqa: E731
    wait_for(lambda: page.wait_for_timeout(100) or live(), what="the worker activated", seconds=90)
    shown = _delivered_until_shown(page, cdp, site=site, registrations=live, payload=received.payload)
    assert shown[0] == {
        "title": "Alice replied to your comment",
        "body": "Not with DynamoDB",
        "tag": received.payload["tag"],
    }

    # The click: a `notificationclick` dispatched in the worker, built from the notification the
    # browser really shows, so the worker's own listener handles it. A headless browser has no
    # notification to click, and refuses `clients.openWindow` without a real click's user
    # activation: the window the listener asks for is recorded, then opened here.
    (worker,) = [one for one in page.context.service_workers if one.url.endswith("/push-worker.js")]
    worker.evaluate(
        """() => {
          self.openedForTest = [];
          self.clients.openWindow = (url) => { self.openedForTest.push(url); return Promise.resolve(null); };
          return self.registration.getNotifications().then(ns => {
            self.dispatchEvent(new NotificationEvent("notificationclick", {notification: ns[0], action: ""}));
          });
        }"""
    )
    clicked: dict = {}
    wait_for(
        lambda: bool(
            clicked.update(
                worker.evaluate(
                    "() => self.registration.getNotifications()"
                    ".then(left => ({asked: self.openedForTest, left: left.length}))"
                )
            )
            or clicked["asked"]
        ),
        what="the click's window asked for",
        seconds=90,
    )
    assert clicked == {"asked": [f"{site}/c/{parent}/#c-{reply}"], "left": 0}  # opened, and closed
    # Marked read by the worker's listener (its POST /api/push/read/), before any page shows it.
    wait_for(lambda: feed_read(user_id=str(bob.pk)).entries[0].read, what="the entry marked read", seconds=90)
    entry = pages.open(clicked["asked"][0], user=bob, viewport=DESKTOP)
    expect(entry.get_by_text("Not with DynamoDB")).to_be_visible()
    assert pages.console_errors == []
