"""Helpers for the push tests: people who turned push on, a subscribed browser of the stand-in's,
one sender pass (what `send_push` does)."""

from __future__ import annotations

import pytest

from notifications.mail.queue import PUSH
from notifications.mail.selectors import mail_queue_due
from notifications.mail.services import MailStats
from notifications.preferences.services import preferences_update
from notifications.push.sender import push_process
from notifications.push.services import subscription_add
from tests.notifications.push_service import Browser, PushService


def uid(user) -> str:
    return str(user.pk)


def push_on(user, *kinds: str) -> None:
    preferences_update(user_id=uid(user), patch={"kinds": {kind: {"push": True} for kind in kinds}}, limited=False)


def subscribed(user, service: PushService, device: str = "Test browser") -> Browser:
    browser = service.subscribe()
    subscription_add(user_id=uid(user), data=browser.to_json(), device=device)
    return browser


def push_due() -> MailStats:
    stats = MailStats()
    for item in mail_queue_due(channel=PUSH):
        stats.count(push_process(item=item))
    return stats


@pytest.fixture
def push_service(settings):
    """A local push-service stand-in (tests/notifications/push_service.py) the site may send to:
    a VAPID key of the test's, plain HTTP to 127.0.0.1 allowed as `make run` allows it."""
    from notifications.push.keys import vapid_key_generate, vapid_public_key
    from tests.notifications.push_service import push_service_start

    settings.VAPID_PRIVATE_KEY = vapid_key_generate()
    settings.VAPID_SUBJECT = "mailto:staff@example.com"
    settings.LOCAL_PLAIN_HTTP = True
    settings.PUSH_SERVICE_HOSTS = ["127.0.0.1"]
    service, server = push_service_start(vapid_public_key=vapid_public_key())
    yield service
    server.shutdown()
    server.server_close()
