"""Writes of people's push subscriptions (reads: notifications/push/selectors.py).

A subscription is the browser's `PushSubscription.toJSON()`: an endpoint at its vendor's push
service and the keys a push is encrypted to. The site only ever sends to an endpoint whose
host is in PUSH_SERVICE_HOSTS (no server-side request to an address a client chose), over
HTTPS (plain HTTP only with LOCAL_PLAIN_HTTP, for local stand-ins).
"""

from __future__ import annotations

import hashlib
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.utils.translation import gettext
from pynamodb.exceptions import DeleteError

from notifications.models import PushSubscription
from notifications.push.keys import b64url_decode
from notifications.push.selectors import endpoint_host, subscriptions_of
from project.clock import clock
from project.dynamo.transactions import conditional_write, write_retrying
from project.errors import ApplicationError, condition_failed

ENDPOINT_MAX = 1000  # characters; the vendors' endpoints are under 300
DEVICE_MAX = 120


def subscription_id_of(endpoint: str) -> str:
    """The item's sort key: a digest of the endpoint (the same browser subscribing again is one item)."""
    return hashlib.blake2b(endpoint.encode(), digest_size=16).hexdigest()


def host_allowed(host: str) -> bool:
    """Whether `host` is one of PUSH_SERVICE_HOSTS (`*.example.com` matches its subdomains)."""
    for allowed in settings.PUSH_SERVICE_HOSTS:
        allowed = allowed.strip().lower()
        if allowed.startswith("*."):
            if host.endswith(allowed[1:]) and len(host) > len(allowed) - 1:
                return True
        elif host == allowed:
            return True
    return False


def endpoint_check(endpoint: Any) -> str:
    """The endpoint, or an ApplicationError (400, field `endpoint`) saying why it is refused."""
    if not isinstance(endpoint, str) or not endpoint:
        raise ApplicationError(gettext("Send the subscription's endpoint (a URL)."), field="endpoint")
    if len(endpoint) > ENDPOINT_MAX:
        raise ApplicationError(
            gettext("At most %(endpoint_max)s characters.") % {"endpoint_max": ENDPOINT_MAX}, field="endpoint"
        )
    try:
        parts = urlsplit(endpoint)
        parts.port  # noqa: B018 - a port that is not a number raises ValueError
    except ValueError:
        raise ApplicationError(gettext("Not a URL."), field="endpoint") from None
    plain = parts.scheme == "http" and bool(settings.LOCAL_PLAIN_HTTP)
    if parts.scheme != "https" and not plain:
        raise ApplicationError(gettext("A push endpoint is an https:// URL."), field="endpoint")
    if parts.username or parts.password or not parts.hostname:
        raise ApplicationError(gettext("Not a push service's URL."), field="endpoint")
    if not host_allowed(endpoint_host(endpoint)):
        raise ApplicationError(
            gettext("%(hostname)s is not a push service this site sends to (PUSH_SERVICE_HOSTS).")
            % {"hostname": parts.hostname},
            field="endpoint",
        )
    return endpoint


def _key(keys: dict[str, Any], name: str, size: int) -> str:
    value = keys.get(name)
    if not isinstance(value, str) or not value or len(value) > 200:
        raise ApplicationError(
            gettext("Send the subscription's `%(name)s` key (base64url).") % {"name": name}, field=f"keys.{name}"
        )
    try:
        raw = b64url_decode(value.strip())
    except ValueError:
        raise ApplicationError(gettext("Not base64url."), field=f"keys.{name}") from None
    if len(raw) != size or (name == "p256dh" and raw[0] != 4):
        raise ApplicationError(
            gettext("Not a %(name)s key of a push subscription.") % {"name": name}, field=f"keys.{name}"
        )
    return value.strip()


def subscription_parse(data: Any) -> tuple[str, str, str]:
    """(endpoint, p256dh, auth) of a `PushSubscription.toJSON()`; ApplicationError naming the field."""
    if not isinstance(data, dict):
        raise ApplicationError(gettext("Send the subscription as JSON: endpoint and keys."), field="non_field_errors")
    unknown = set(data) - {"endpoint", "keys", "expirationTime"}
    if unknown:
        raise ApplicationError(gettext("Unknown field."), field=sorted(unknown)[0])
    endpoint = endpoint_check(data.get("endpoint"))
    keys = data.get("keys")
    if not isinstance(keys, dict):
        raise ApplicationError(gettext("Send the subscription's keys: p256dh and auth."), field="keys")
    return endpoint, _key(keys, "p256dh", 65), _key(keys, "auth", 16)


def subscription_add(*, user_id: str, data: Any, device: str = "") -> PushSubscription:
    """Keep the browser's subscription (400 naming the field when it is not one the site sends to,
    or when the person holds PUSH_SUBSCRIPTIONS_MAX others already).

    One Query of the person's subscriptions, one PutItem. Twice (the same browser again, or a
    new key for the same endpoint): the same item, its keys the latest. Two different browsers
    subscribing at the same moment may each see room for one and both land: the bound is
    exceeded by at most the number of concurrent requests. Dies half way: put or not.
    """
    endpoint, p256dh, auth = subscription_parse(data)
    subscription_id = subscription_id_of(endpoint)
    held = subscriptions_of(user_id=user_id)
    others = [item for item in held if item.subscription_id != subscription_id]
    if len(others) >= int(settings.PUSH_SUBSCRIPTIONS_MAX):
        raise ApplicationError(
            gettext("At most %(push_subscriptions_max)s browsers receive your notifications: remove one first.")
            % {"push_subscriptions_max": settings.PUSH_SUBSCRIPTIONS_MAX},
            field="non_field_errors",
        )
    now = clock.now_ms()
    earlier = next((item for item in held if item.subscription_id == subscription_id), None)
    item = PushSubscription(
        user_id,
        subscription_id,
        endpoint=endpoint,
        p256dh=p256dh,
        auth=auth,
        device=" ".join(device.split())[:DEVICE_MAX],
        created_at=int(earlier.created_at) if earlier else now,
        last_used_at=int(earlier.last_used_at or 0) if earlier else 0,
    )
    write_retrying(item.save, what="push subscription put")
    return item


def subscription_remove(*, user_id: str, subscription_id: str) -> bool:
    """Forget one of the person's subscriptions: one DeleteItem on condition it exists. True when
    it was there. Twice: the second finds nothing and answers False."""
    item = PushSubscription(user_id, subscription_id)
    try:
        item.delete(condition=PushSubscription.subscription_id.exists())
    except DeleteError as error:
        if not condition_failed(error):
            raise
        return False
    return True


def subscription_used(item: PushSubscription) -> None:
    """The push service took a push for it: `last_used_at` now (only while the item exists,
    so a device removed meanwhile is not written back)."""
    conditional_write(
        lambda: item.update(
            actions=[PushSubscription.last_used_at.set(clock.now_ms())],
            condition=PushSubscription.subscription_id.exists(),
        ),
        what="push subscription used",
    )


def subscriptions_forget(*, user_id: str) -> None:
    """Every subscription of a deleted account (one Query, a BatchWriteItem). Twice: nothing left."""
    with PushSubscription.batch_write() as batch:
        for item in subscriptions_of(user_id=user_id):
            batch.delete(item)
