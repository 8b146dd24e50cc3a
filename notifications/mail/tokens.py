"""The signed tokens of mail links: one-click unsubscribe, and e-mail address verification (one
account's link, and the address's link to every account waiting on it).

`django.core.signing` with a salt of its own per purpose, so a token made for one can
never be replayed as the other (nor as any other signed value of the site).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.conf import settings
from django.core import signing

UNSUBSCRIBE_SALT = "notifications.mail.unsubscribe"
VERIFY_SALT = "notifications.mail.verify-email"
ADDRESS_SALT = "notifications.mail.verify-address"
DIGEST = "digest"  # the "kind" of an unsubscribe token that turns the digest off


@dataclass(frozen=True)
class Unsubscribe:
    user_id: str
    kind: str  # like, reply, mention, message, or "digest"
    address: str = ""  # address_digest of the address mailed ("" in links made before links carried it)


def address_digest(email: str) -> str:
    """What an unsubscribe link says of the address it was mailed to (not the address itself)."""
    return hashlib.sha256(email.strip().lower().encode()).hexdigest()[:16]


def unsubscribe_token(*, user_id: str, kind: str, email: str = "") -> str:
    """A token turning `kind`'s e-mail (or the digest) off for `user_id` while the account's
    address is still `email`. No expiry: a mail read a year later still unsubscribes (RFC 8058
    asks links to keep working), but not once the account has another address."""
    data = {"u": user_id, "k": kind}
    if email:
        data["e"] = address_digest(email)
    return signing.dumps(data, salt=UNSUBSCRIBE_SALT, compress=True)


def _signed(token: str, *, salt: str, fields: tuple[str, ...], max_age: int | None = None) -> dict | None:
    """The dict a token signed with `salt` holds, when each of `fields` is a non-empty string in
    it (and the token is younger than `max_age` seconds, when given); None otherwise."""
    try:
        data = signing.loads(token, salt=salt, max_age=max_age)
    except signing.BadSignature:  # SignatureExpired is one
        return None
    if not isinstance(data, dict) or not all(isinstance(data.get(name), str) and data[name] for name in fields):
        return None
    return data


def unsubscribe_read(token: str) -> Unsubscribe | None:
    """What a token unsubscribes from; None for a token this site did not sign."""
    data = _signed(token, salt=UNSUBSCRIBE_SALT, fields=("u", "k"))
    if data is None:
        return None
    address = data.get("e")
    return Unsubscribe(user_id=data["u"], kind=data["k"], address=address if isinstance(address, str) else "")


def unsubscribe_url(*, user_id: str, kind: str, email: str = "") -> str:
    return f"{settings.SITE_URL}/mail/unsubscribe/{unsubscribe_token(user_id=user_id, kind=kind, email=email)}/"


def verify_token(*, user_id: str, email: str) -> str:
    """A token proving that whoever holds it reads `email`: valid EMAIL_VERIFY_TIMEOUT seconds,
    and only while the account's address is still `email` (a change makes old links void)."""
    return signing.dumps({"u": user_id, "e": email}, salt=VERIFY_SALT, compress=True)


def verify_read(token: str) -> tuple[str, str] | None:
    """(user_id, email) of a verification token still valid; None otherwise."""
    data = _signed(token, salt=VERIFY_SALT, fields=("u", "e"), max_age=settings.EMAIL_VERIFY_TIMEOUT)
    return None if data is None else (data["u"], data["e"])


def address_token(email: str) -> str:
    """A token proving that whoever holds it reads `email` (any letter case), valid
    EMAIL_VERIFY_TIMEOUT seconds: the link to every account waiting on that address."""
    return signing.dumps({"a": email.strip().lower()}, salt=ADDRESS_SALT, compress=True)


def address_read(token: str) -> str | None:
    """The address (lower case) of an address token still valid; None otherwise."""
    data = _signed(token, salt=ADDRESS_SALT, fields=("a",), max_age=settings.EMAIL_VERIFY_TIMEOUT)
    return None if data is None else data["a"]
