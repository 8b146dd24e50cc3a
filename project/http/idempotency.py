"""`Idempotency-Key` on the POST endpoints that create (a comment or reply, a delivery).

A client that lost an answer (a timeout, a dropped connection) sends the same request
again with the same key and gets the first answer back instead of a second comment.
The key is the user's own (`<user id>#<key>`), kept IDEMPOTENCY_TTL_SECONDS in the
`idempotency` table (project/models.py), never in process memory, so every process
and machine sees it:

1. Claim: a conditional put ("no item with this key") of a pending record with the
   request's fingerprint (method, path, body) and a random owner token. Of two
   concurrent requests with one key exactly one wins the put.
2. The winner runs the view. A 2xx answer is stored (conditional on still owning the
   claim); anything else (a 400, a 429, an exception) releases the claim, so a retry
   runs again and gets its own answer.
3. Any other request with the key reads the record (consistently): another body is a
   422 naming the header; a stored answer is returned as it was
   (`Idempotent-Replayed: true`); a pending one is waited for up to
   IDEMPOTENCY_WAIT_SECONDS, then a 409 with Retry-After.

A claim left pending by a request that died is taken over after
IDEMPOTENCY_LEASE_SECONDS (conditional on the dead owner's token). If that request
had already created its comment before dying, the retry creates a second one: the
record and the creation are not in one transaction (a comment's transaction would
have to carry the record through every service), and a process dying in that
window is rare next to the lost answers this is for.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import re
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, cast

from django.conf import settings
from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiParameter
from pynamodb.exceptions import DeleteError, DoesNotExist, PutError, UpdateError
from rest_framework import status
from rest_framework.response import Response
from rest_framework.utils.encoders import JSONEncoder

from project.clock import clock
from project.errors import ApplicationError, Conflict, condition_failed
from project.models import IdempotencyRecord

if TYPE_CHECKING:
    from collections.abc import Callable

    from pynamodb.expressions.condition import Condition
    from rest_framework.request import Request
    from rest_framework.views import APIView

logger = logging.getLogger(__name__)

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
KEY_PATTERN = re.compile(r"[\x21-\x7e]{1,255}")  # visible ASCII, as UUIDs and ULIDs are
PENDING, DONE = "pending", "done"
POLL_SECONDS = 0.05

IDEMPOTENCY_PARAMETER = OpenApiParameter(
    HEADER,
    {"type": "string", "minLength": 1, "maxLength": 255, "pattern": "^[\\x21-\\x7e]+$"},
    location=OpenApiParameter.HEADER,
    required=False,
    description=(
        "Optional, 1-255 visible ASCII characters (a UUID is fine). The first 2xx answer is kept "
        "24 hours for this key and user: a retry with the same key and the same body gets it back "
        f"(`{REPLAYED_HEADER}: true`) and creates nothing; the same key with another body is a 422; "
        "while the first request is still running, a retry waits briefly, then gets a 409 to retry."
    ),
)


class IdempotencyKeyInvalid(ApplicationError):
    code = "invalid"

    def __init__(self, message: str):
        super().__init__(message, field=HEADER)


class IdempotencyKeyReused(ApplicationError):
    status_code = status.HTTP_422_UNPROCESSABLE_ENTITY
    code = "idempotency_key_reused"

    def __init__(self) -> None:
        super().__init__(
            "This Idempotency-Key was used with another request: use a new key for a new request.", field=HEADER
        )


class IdempotencyInProgress(Conflict):
    code = "idempotency_in_progress"

    def __init__(self) -> None:
        super().__init__("A request with this Idempotency-Key is still running: retry shortly.", field=HEADER)


@dataclass(frozen=True)
class Claimed:
    """This request owns the key: run it, then `idempotency_complete` or `idempotency_release`."""

    key: str
    owner: str


@dataclass(frozen=True)
class Stored:
    """The answer the first request with the key gave."""

    status: int
    body: object


def request_fingerprint(*, method: str, path: str, data: Any) -> str:
    """What makes two requests "the same": method, path and body (keys sorted, form lists kept)."""
    if hasattr(data, "getlist"):
        data = {name: data.getlist(name) for name in data}
    body = json.dumps(data, sort_keys=True, cls=JSONEncoder, separators=(",", ":"))
    return hashlib.sha256(f"{method} {path}\n{body}".encode()).hexdigest()


def _new_record(key: str, fingerprint: str) -> IdempotencyRecord:
    now = clock.now()
    return IdempotencyRecord(
        key,
        fingerprint=fingerprint,
        owner=uuid.uuid4().hex,
        state=PENDING,
        claimed_ms=int(now * 1000),
        expires_at=datetime.fromtimestamp(now, UTC) + timedelta(seconds=settings.IDEMPOTENCY_TTL_SECONDS),
    )


def _put(record: IdempotencyRecord, condition: Condition | None) -> bool:
    try:
        record.save(condition=condition)
        return True
    except PutError as error:
        if not condition_failed(error):
            raise
        return False


def idempotency_claim(*, user_id: str, key: str, fingerprint: str) -> Claimed | Stored:
    """Claim `key` for this user, or the answer stored for it (see the module docstring).

    Concurrently with itself: one conditional put wins; the others read what it wrote
    (wait while it is pending). Raises IdempotencyKeyReused (another body) or
    IdempotencyInProgress (still pending after IDEMPOTENCY_WAIT_SECONDS).
    """
    full_key = f"{user_id}#{key}"
    deadline = clock.monotonic() + settings.IDEMPOTENCY_WAIT_SECONDS
    while True:
        record = _new_record(full_key, fingerprint)
        if _put(record, IdempotencyRecord.key.does_not_exist()):
            return Claimed(full_key, record.owner)
        try:
            existing = IdempotencyRecord.get(full_key, consistent_read=True)
        except DoesNotExist:
            continue  # released in between: claim again
        now_ms = clock.now_ms()
        expired = existing.expires_at.timestamp() * 1000 <= now_ms
        abandoned = (
            existing.state == PENDING and now_ms - int(existing.claimed_ms) > settings.IDEMPOTENCY_LEASE_SECONDS * 1000
        )
        if expired or abandoned:
            # Take it over only from the owner read: of several retries, one wins.
            if _put(record, IdempotencyRecord.owner == existing.owner):
                logger.warning("Idempotency-Key %s taken over (%s)", full_key, "expired" if expired else "abandoned")
                return Claimed(full_key, record.owner)
            continue
        if existing.fingerprint != fingerprint:
            raise IdempotencyKeyReused()
        if existing.state == DONE:
            return Stored(int(existing.status), json.loads(existing.response))
        if clock.monotonic() >= deadline:
            raise IdempotencyInProgress()
        clock.sleep(POLL_SECONDS)


def idempotency_complete(*, claim: Claimed, status_code: int, body: Any) -> None:
    """Store the answer of the claiming request (only while it still owns the claim).

    Twice: the second writes the same. Dies before it, or DynamoDB fails it: the claim
    is taken over after IDEMPOTENCY_LEASE_SECONDS (the module docstring says what that
    costs); it never raises, since what it follows has already been created and the
    client should get that answer.
    """
    try:
        IdempotencyRecord(claim.key).update(
            actions=[
                IdempotencyRecord.state.set(DONE),
                IdempotencyRecord.status.set(status_code),
                IdempotencyRecord.response.set(json.dumps(body, cls=JSONEncoder, separators=(",", ":"))),
            ],
            condition=IdempotencyRecord.owner == claim.owner,
        )
    except UpdateError as error:
        if condition_failed(error):
            logger.warning("Idempotency-Key %s was taken over before its answer was stored", claim.key)
        else:
            logger.exception("Idempotency-Key %s: the answer was not stored", claim.key)


def idempotency_release(*, claim: Claimed) -> None:
    """Give the key up after a failed request, so a retry runs again. Never raises: a claim
    left behind is taken over after IDEMPOTENCY_LEASE_SECONDS."""
    try:
        IdempotencyRecord(claim.key).delete(condition=IdempotencyRecord.owner == claim.owner)
    except DeleteError as error:
        logger.warning("Idempotency-Key %s not released (%s)", claim.key, error)


def idempotent(handler: Callable[..., Response]) -> Callable[..., Response]:
    """Wrap an APIView's `post` (after authentication and permissions) with the header's rules."""

    @functools.wraps(handler)
    def wrapper(view: APIView, request: Request, *args: Any, **kwargs: Any) -> Response:
        key = request.headers.get(HEADER)
        if key is None:
            return handler(view, request, *args, **kwargs)
        if not KEY_PATTERN.fullmatch(key):
            raise IdempotencyKeyInvalid(
                gettext("%(header)s: 1 to 255 visible ASCII characters (e.g. a UUID).") % {"header": HEADER}
            )
        # A request being served always has its method (django-stubs allow None, for a bare HttpRequest()).
        method = cast(str, request.method)
        fingerprint = request_fingerprint(method=method, path=request.path, data=request.data)
        outcome = idempotency_claim(user_id=str(request.user.pk), key=key, fingerprint=fingerprint)
        if isinstance(outcome, Stored):
            return Response(outcome.body, status=outcome.status, headers={REPLAYED_HEADER: "true"})
        try:
            response = handler(view, request, *args, **kwargs)
        except BaseException:
            idempotency_release(claim=outcome)
            raise
        if 200 <= response.status_code < 300:
            idempotency_complete(claim=outcome, status_code=response.status_code, body=response.data)
        else:
            idempotency_release(claim=outcome)
        return response

    # The schema documents its 422 (project.http.schema) when it finds this mark on the view's method.
    wrapper.takes_idempotency_key = True  # type: ignore[attr-defined]
    return wrapper


def form_post_once(*, user_id: str, key: str, text: str, create: Callable[[], str]) -> tuple[str, bool]:
    """A page's create form (a post or reply box) sent twice with the same text: `create`
    runs once. Returns (what the first run created, replayed).

    The form carries a key minted when the page was drawn (`idempotency_key`); a page the
    browser restores on Back carries the same one. The key covers the key *and* the text,
    so the same box sending other text later is a new post, never a 422. No key (an old
    page), or not one a header could carry: `create` runs, as before. The rules and
    failure modes are the header's (claim, store, release on failure; the module docstring).
    """
    if not KEY_PATTERN.fullmatch(key or "") or len(key) > 64:
        return create(), False
    digest = hashlib.sha256(text.encode()).hexdigest()
    try:
        outcome = idempotency_claim(user_id=user_id, key=f"form:{key}:{digest[:32]}", fingerprint=digest)
    except IdempotencyInProgress:
        raise Conflict(
            gettext("This text is being posted already (pressed twice): reload the page in a moment."), field="body"
        ) from None
    if isinstance(outcome, Stored):
        return str(cast("dict[str, str]", outcome.body)["id"]), True
    try:
        created = create()
    except BaseException:
        idempotency_release(claim=outcome)
        raise
    idempotency_complete(claim=outcome, status_code=status.HTTP_201_CREATED, body={"id": created})
    return created, False
