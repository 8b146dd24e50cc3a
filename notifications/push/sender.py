"""Sending Web Push exactly once, through the e-mail channel's queue and ledger.

A push is a `mail_queue` item of channel `push` (in the push shards, put in the transaction of
the feed write it is about, notifications/mail/queue.py) and, once a sender took it up, a
`sends` ledger line of channel `push`. `push_process` is one sender's work on one due item,
the steps of `mail_process` (notifications/mail/services.py) with the same functions:

1. Claim the queue item (its lease: MAIL_LEASE_SECONDS). A ledger line exists: handled before
   (sent, failed, skipped, or `unknown`): nothing goes, the item goes.
2. Past the kind's TTL since it was scheduled: skipped. Re-check at send time
   (notifications/push/checks.py); a failed check puts a `skipped` line saying why. No browser
   subscribed: skipped.
3. Claim the ledger line (`sending` on condition it is absent: of concurrent senders exactly
   one wins), send to each of the person's browsers, mark the line `sent` (some browser's push
   service took it) or `failed`.
4. Delete the queue item.

Per browser: 201 takes it (`last_used_at`); 404 or 410 means the subscription is gone, and it
is removed at once; 429, 5xx and a refused connection are retried with backoff (honouring
`Retry-After`) while the push's TTL and the sender's lease last; anything else fails. A
timeout is not retried: the push may have arrived.

Dies anywhere: before 3's claim, the next sender does it all again (nothing was sent); between
the claim and the mark the line stays `sending`, reads `unknown` once its lease is over, and
is never sent again (at most once: a duplicate notification is worse than a missing one);
after the mark, the next sender finds the line and deletes the item.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextvars import copy_context
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import requests
import requests.adapters
from django.conf import settings
from django.db import close_old_connections
from py_vapid import Vapid02
from pywebpush import WebPusher

from notifications.mail.queue import PUSH
from notifications.mail.selectors import FAILED, SENDING, SENT, ledger_get
from notifications.mail.services import (
    ALREADY,
    POSTPONED,
    TAKEN,
    ledger_mark,
    ledger_put,
    ledger_take_back,
    mail_queue_claim,
    mail_queue_done,
    mail_queue_postpone,
    queue_item_skip,
)
from notifications.models import MailQueue, PushSubscription
from notifications.presence import is_present, present_window_ms
from notifications.push import checks
from notifications.push.content import delivery_of, push_payload, push_topic
from notifications.push.keys import vapid
from notifications.push.selectors import subscriptions_of
from notifications.push.services import subscription_remove
from notifications.push.services import subscription_used as subscription_used  # a test stalls here
from project.clock import clock

logger = logging.getLogger(__name__)

PUSH_ATTEMPTS = 4  # per browser: the first try and three retries of a 429 / 5xx
BACKOFF = (1.0, 30.0)  # (first wait, longest wait) seconds between them
HTTP_TIMEOUT = 10.0  # seconds for one POST to a push service
VAPID_HOURS = 12  # a signature's `exp` (RFC 8292 allows at most 24 h)
TAKEN_CODES = (200, 201, 202)
GONE_CODES = (404, 410)

# What one browser's attempt came to.
DELIVERED, GONE, REFUSED = "sent", "gone", "failed"


@dataclass(frozen=True)
class Attempt:
    outcome: str  # DELIVERED, GONE, REFUSED
    detail: str  # "201", "410", "429 after 4 tries", "Timeout"


def _retryable(status: int) -> bool:
    return status == 429 or 500 <= status <= 599


def _wait(response: requests.Response | None, tries: int) -> float:
    """Seconds before the next try: the service's Retry-After (seconds) when it says, else doubling."""
    said = response.headers.get("Retry-After", "") if response is not None else ""
    if said.strip().isdigit():
        return min(float(said), BACKOFF[1])
    return float(min(BACKOFF[0] * 2 ** (tries - 1), BACKOFF[1]))


@dataclass(frozen=True)
class _Signed:
    key: Vapid02  # the key that signed it (another key, after a change of settings: sign again)
    subject: str
    exp: int  # epoch seconds
    headers: dict[str, str]


_signed: dict[str, _Signed] = {}  # by audience (a push service's origin)
_signed_lock = threading.Lock()


def vapid_headers(endpoint: str) -> dict[str, str]:
    """The `Authorization: vapid t=<JWT>, k=<public key>` of a push to `endpoint`'s origin.

    A JWT is valid VAPID_HOURS and says nothing but the audience, the subject and its expiry,
    so one is signed per push service and reused until half its validity is left (RFC 8292
    lets a sender reuse a token while it is valid): the signature is not redone per push."""
    parts = urlsplit(endpoint)
    audience = f"{parts.scheme}://{parts.netloc}"
    key, subject, now = vapid(), str(settings.VAPID_SUBJECT), int(clock.now())
    with _signed_lock:
        found = _signed.get(audience)
    if (
        found
        and found.key is key
        and found.subject == subject
        and VAPID_HOURS * 1800 < found.exp - now <= VAPID_HOURS * 3600
    ):
        return found.headers
    exp = now + VAPID_HOURS * 3600
    headers: dict[str, str] = key.sign({"aud": audience, "sub": subject, "exp": exp})
    with _signed_lock:
        _signed[audience] = _Signed(key=key, subject=subject, exp=exp, headers=headers)
    return headers


def push_to(
    subscription: PushSubscription,
    *,
    payload: bytes,
    kind: str,
    topic: str,
    deadline_ms: int,
    session: requests.Session | None = None,
) -> Attempt:
    """Send one push to one browser, retrying 429 / 5xx within `deadline_ms` (the TTL and the lease)."""
    info = {"endpoint": subscription.endpoint, "keys": {"p256dh": subscription.p256dh, "auth": subscription.auth}}
    urgency = delivery_of(kind).urgency
    tries = 0
    while True:
        tries += 1
        ttl = max(1, (deadline_ms - clock.now_ms()) // 1000)
        headers = {**vapid_headers(subscription.endpoint), "Urgency": urgency, "Topic": topic}
        response: requests.Response | None = None
        try:
            sent: Any = WebPusher(info, requests_session=session).send(
                data=payload, headers=headers, ttl=int(ttl), content_encoding="aes128gcm", timeout=HTTP_TIMEOUT
            )
            response = sent
            status = int(sent.status_code)
        except requests.Timeout:
            return Attempt(REFUSED, "Timeout (it may have arrived: not retried)")
        except requests.ConnectionError as error:
            status, detail = 0, f"connection refused: {type(error).__name__}"
        if status in TAKEN_CODES:
            subscription_used(subscription)
            return Attempt(DELIVERED, str(status))
        if status in GONE_CODES:
            subscription_remove(user_id=subscription.user_id, subscription_id=subscription.subscription_id)
            return Attempt(GONE, str(status))
        detail = str(status) if status else detail
        if not (status == 0 or _retryable(status)):
            return Attempt(REFUSED, detail)
        wait = _wait(response, tries)
        if tries >= PUSH_ATTEMPTS or clock.now_ms() + wait * 1000 >= deadline_ms:
            return Attempt(REFUSED, f"{detail} after {tries} tries")
        clock.sleep(wait)


def _summary(attempts: list[Attempt]) -> str:
    return "; ".join(f"browser {n}: {attempt.outcome} ({attempt.detail})" for n, attempt in enumerate(attempts, 1))


def _skip(item: MailQueue, reason: str) -> str:
    return queue_item_skip(item, reason, channel=PUSH)


def push_process(*, item: MailQueue, session: requests.Session | None = None, account: Any = checks.READ_HERE) -> str:
    """Handle one due push (module doc): sent, failed, skipped, postponed (the person is present in
    an open tab: notifications/presence.py), already or taken. `account`: the person's account as
    the caller read it (checks.push_verdict); by default read here. Safe in several threads at
    once (each item is claimed by one); `session` may be shared by them."""
    if not mail_queue_claim(item):
        return TAKEN
    if ledger_get(user_id=item.user_id, channel=PUSH, source=item.source) is not None:
        mail_queue_done(item)
        return ALREADY
    expires_ms = int(item.created_at) + delivery_of(item.kind).ttl * 1000
    if clock.now_ms() >= expires_ms:
        return _skip(item, checks.EXPIRED)
    verdict = checks.push_verdict(user_id=item.user_id, kind=item.kind, entry_id=item.entry_id, account=account)
    if verdict.skip or verdict.about is None:
        return _skip(item, verdict.skip)
    about = verdict.about
    if is_present(user_id=item.user_id):
        # Seen in an open tab: wait; read meanwhile, the next check skips it (never past the TTL).
        if clock.now_ms() + present_window_ms() >= expires_ms:
            return _skip(item, checks.PRESENT)
        mail_queue_postpone(item, seconds=present_window_ms() / 1000)
        return POSTPONED
    subscriptions = subscriptions_of(user_id=item.user_id)
    if not subscriptions:
        return _skip(item, checks.NO_DEVICE)
    line = ledger_put(
        user_id=item.user_id,
        source=item.source,
        kind=item.kind,
        state=SENDING,
        entry_id=item.entry_id,
        address=f"{len(subscriptions)} browser(s)",
        channel=PUSH,
    )
    if line is None:
        mail_queue_done(item)
        return ALREADY
    try:
        payload = push_payload(about=about, source=item.source, user_id=item.user_id)
        topic = push_topic(kind=item.kind, entry_id=about.entry_id or item.entry_id)
        vapid()  # no key: raise before anything goes, and give the line back
    except Exception:
        ledger_take_back(line)
        raise
    # Retries stop where the lease does: past it another sender may find the line `unknown`.
    deadline_ms = min(expires_ms, int(line.lease_until) - 5000)
    attempts = [
        push_to(subscription, payload=payload, kind=item.kind, topic=topic, deadline_ms=deadline_ms, session=session)
        for subscription in subscriptions
    ]
    outcome = SENT if any(attempt.outcome == DELIVERED for attempt in attempts) else FAILED
    if outcome == FAILED:
        logger.warning("push %s to user %s failed: %s", item.source, item.user_id, _summary(attempts))
    ledger_mark(line, state=outcome, reason=_summary(attempts), subject=about.text)
    mail_queue_done(item)
    return outcome


def push_session(threads: int) -> requests.Session:
    """One HTTP session for a sender's threads: keep-alive connections to each push service,
    as many per service as threads send at once (no new TCP and TLS handshake per push)."""
    session = requests.Session()
    adapter = requests.adapters.HTTPAdapter(pool_connections=4, pool_maxsize=threads)
    session.mount("https://", adapter)
    session.mount("http://", adapter)
    return session


class PushSender:
    """A sender's due pushes handled `threads` at a time (a push spends its time waiting on
    DynamoDB and the push service, so one process sends many at once), over one keep-alive
    session. Each item is still claimed by one thread (`push_process`: exactly as when sent
    one by one). The batch's accounts are read in the caller's thread, in one SQL query; a
    thread's own database connection (the notification's author names) is closed as a
    request's is (CONN_MAX_AGE). `close` waits for the pushes under way."""

    def __init__(self, *, threads: int) -> None:
        self.threads = threads
        self.session = push_session(threads)
        self.pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="send-push")

    def process(self, due: list[MailQueue], *, stopped: Callable[[], bool]) -> Iterator[tuple[MailQueue, str]]:
        """Each item of `due` with its outcome, as they finish; once `stopped()` is true, the
        items not yet begun are left for a later pass (the pushes under way finish)."""
        accounts = checks.accounts_of(item.user_id for item in due)

        def one(item: MailQueue) -> str | None:
            if stopped():
                return None
            close_old_connections()
            try:
                return push_process(item=item, session=self.session, account=accounts.get(item.user_id))
            finally:
                close_old_connections()

        futures = {self.pool.submit(copy_context().run, one, item): item for item in due}
        for future in as_completed(futures):
            outcome = future.result()
            if outcome is not None:
                yield futures[future], outcome

    def close(self) -> None:
        self.pool.shutdown(wait=True)
        self.session.close()
