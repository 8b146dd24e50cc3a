"""The site's VAPID key pair (RFC 8292): the private key signs each push's JWT, the public key
is the `applicationServerKey` browsers subscribe with (`GET /api/push/key/`).

VAPID_PRIVATE_KEY holds the raw P-256 private key, base64url (what `vapid_key_generate` prints);
VAPID_PRIVATE_KEY_FILE names a file holding it (`make run` generates var/vapid_private_key once).
"""

from __future__ import annotations

import base64
from functools import lru_cache
from pathlib import Path

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from django.conf import settings
from django.utils.translation import gettext
from py_vapid import Vapid02

from project.errors import ApplicationError


class PushNotConfigured(ApplicationError):
    """The site has no VAPID key: push is not offered here (404 to a client asking for the key)."""

    status_code = 404
    code = "push_not_configured"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def vapid_key_generate() -> str:
    """A new private key, base64url of its 32 raw bytes (for VAPID_PRIVATE_KEY)."""
    key = ec.generate_private_key(ec.SECP256R1())
    return b64url(key.private_numbers().private_value.to_bytes(32, "big"))


def _private_key_text() -> str:
    text = str(getattr(settings, "VAPID_PRIVATE_KEY", "") or "")
    path = str(getattr(settings, "VAPID_PRIVATE_KEY_FILE", "") or "")
    if not text and path:
        text = Path(path).read_text().strip()
    return text


@lru_cache(maxsize=4)
def _vapid(text: str) -> Vapid02:
    return Vapid02.from_string(text)


def vapid() -> Vapid02:
    """The site's key (PushNotConfigured, 404 to a client, when none is set)."""
    text = _private_key_text()
    if not text:
        raise PushNotConfigured(gettext("Push notifications are not set up on this site (no VAPID key)."))
    return _vapid(text)


def vapid_public_key() -> str:
    """The application server key browsers subscribe with: the uncompressed point, base64url."""
    public = vapid().public_key.public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return b64url(public)
