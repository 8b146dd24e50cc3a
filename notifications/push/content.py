"""What a push carries, for how long, and how urgently (RFC 8030 `TTL`, `Urgency`, `Topic`).

The payload (encrypted to the browser) holds the ids, kind and count of the notification and
the text the inbox shows: its sentence and the excerpt the inbox shows, never more of a comment.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from django.core import signing
from django.templatetags.static import static

from notifications.mail.checks import About
from notifications.mail.content import site_url


@dataclass(frozen=True)
class Delivery:
    ttl: int  # seconds a push service keeps the push for a browser that is offline
    urgency: str  # very-low, low, normal, high (RFC 8030 5.3): a phone on battery waits for low ones


# Per kind; a kind not listed (a new one) gets DEFAULT.
DELIVERY = {
    "like": Delivery(ttl=24 * 3600, urgency="low"),
    "reaction": Delivery(ttl=24 * 3600, urgency="low"),
    "reply": Delivery(ttl=2 * 24 * 3600, urgency="normal"),
    "mention": Delivery(ttl=2 * 24 * 3600, urgency="high"),
    "message": Delivery(ttl=7 * 24 * 3600, urgency="normal"),
}
DEFAULT = Delivery(ttl=24 * 3600, urgency="normal")


def delivery_of(kind: str) -> Delivery:
    return DELIVERY.get(kind, DEFAULT)


def push_topic(*, kind: str, entry_id: str) -> str:
    """The `Topic` header of pushes about one feed entry: a later push about the same entry
    replaces an undelivered earlier one at the push service (and, through `tag`, the shown
    notification on the device). 32 characters of the URL-safe alphabet, as RFC 8030 allows."""
    return hashlib.blake2b(f"{kind}:{entry_id}".encode(), digest_size=16).hexdigest()


READ_SALT = "notifications.push.read"
READ_MAX_AGE = 30 * 24 * 3600  # seconds a notification's click still marks it read


def read_token(*, user_id: str, kind: str, entry_id: str) -> str:
    """What a click on the shown notification hands to `POST /api/push/read/`: signed, so the
    service worker (which has no CSRF token) proves which person's entry it marks read."""
    return signing.dumps({"u": user_id, "k": kind, "e": entry_id}, salt=READ_SALT, compress=True)


def read_token_open(token: str) -> tuple[str, str, str] | None:
    """(user_id, kind, entry_id) of a token this site signed within READ_MAX_AGE; None otherwise."""
    try:
        data = signing.loads(token, salt=READ_SALT, max_age=READ_MAX_AGE)
    except signing.BadSignature:
        return None
    if not isinstance(data, dict) or not all(isinstance(data.get(key), str) for key in ("u", "k", "e")):
        return None
    return data["u"], data["k"], data["e"]


def push_payload(*, about: About, source: str, user_id: str = "") -> bytes:
    """The JSON the service worker shows (notifications/static/notifications/push-worker.js)."""
    data = {
        "id": source,
        "entry_id": about.entry_id,
        "kind": about.kind,
        "count": about.count,
        "title": about.text,
        "body": about.excerpt,
        "url": site_url(about.path),
        "tag": push_topic(kind=about.kind, entry_id=about.entry_id),
        "icon": static("project/favicon.svg"),
        "read": read_token(user_id=user_id, kind=about.kind, entry_id=about.entry_id) if user_id else "",
    }
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()
