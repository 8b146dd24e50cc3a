"""Writes of the delivery room: create and cancel a delivery, drop a deleted account's targets.

The rest of the life of a delivery lives next to this module:
`preparation.py` (freeze the audience into chunks and targets), `leases.py` (claim,
renew, release a chunk), `dispatch.py` (deliver a chunk in batches, complete it, finish
the delivery; the dispatcher's loop); reads are in `selectors.py`.

The guarantee (docs/explanation/deliveries.md "Broadcast deliveries"): every target of a delivery gets its message
exactly once, nobody else gets it, across crashes at any instant, re-runs and
several dispatchers on several machines. It rests on durable items and
conditions only (never on ClientRequestToken's 10-minute window):

1. Prepare freezes the audience into immutable chunk items (conditional put: the
   first writer's content wins) and writes one `delivery_targets` item per user.
   Target puts run in transactions with a condition check that the chunk's
   `targets_written` flag is still unset; the flag is set before the delivery can
   become `ready`, so a stalled preparer can never re-create a target after
   dispatch has deleted it.
2. A message is delivered only in a transaction that also deletes the user's
   target item (condition: it exists) and writes the feed (condition: the version
   read). A second attempt, by anyone, finds the target gone and commits nothing;
   a feed that changed in between cancels the whole transaction, which is retried
   with a fresh read. Nobody outside the chunks has a target item, so nobody else
   can receive the message.
3. Chunk leases only keep dispatchers from doing the same work twice; correctness
   does not depend on them. A holder whose lease expired and was taken over still
   carries the target-exists condition on every write.
4. Counts are exact by construction: a chunk's `delivered` is added in the same
   transactions that deliver, and folded into the delivery's `delivered_count` in
   the transaction that marks the chunk done (once: conditional on `pending`).
   Nothing needs repairing after a crash.
"""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models.functions import Lower
from django.utils.translation import gettext

from delivery.models import (
    AUDIENCE_ALL,
    AUDIENCE_GROUP,
    AUDIENCE_USERNAMES,
    CANCELLED,
    CHUNK_PENDING,
    DONE,
    DRAFT,
    FINAL_STATUSES,
    QUEUE,
    Delivery,
    DeliveryChunk,
    DeliveryQueueEntry,
    DeliveryTarget,
    chunk_key,
)
from delivery.selectors import delivery_get_consistent
from notifications.feed.events import FeedEvent
from project.clock import clock
from project.dynamo.transactions import LabelledTransactWrite, transact
from project.errors import ApplicationError
from social.account.limits import account_limit_enforce

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser
    from pynamodb.expressions.condition import Condition

logger = logging.getLogger(__name__)

CHUNK_SIZE_MAX = 1000  # far below the 400 KB item limit whatever the id length
TRANSACTION_ACTIONS_MAX = 100  # TransactWriteItems limit
UNKNOWN_USERNAMES_KEPT = 1000
# Per target: the target delete, the feed put and the unread-count update; per
# batch: the delivery's status check and the chunk's count.
ACTIONS_PER_TARGET = 3
BATCH_SIZE_MAX = (TRANSACTION_ACTIONS_MAX - 2) // ACTIONS_PER_TARGET


def chunk_size() -> int:
    return max(1, min(CHUNK_SIZE_MAX, int(getattr(settings, "DELIVERY_CHUNK_SIZE", CHUNK_SIZE_MAX))))


def finish_transaction(
    delivery: Delivery, *, status: str, condition: Condition
) -> Callable[[LabelledTransactWrite], None]:
    """A transaction that moves `delivery` to a final `status` (on `condition`) and takes
    it off the dispatch queue: both or neither."""

    def build(transaction: LabelledTransactWrite) -> None:
        finished_at = clock.now_iso()
        transaction.update(
            delivery,
            actions=[
                Delivery.status.set(status),
                Delivery.finished_at.set(finished_at),
                Delivery.updated_at.set(finished_at),
            ],
            condition=condition,
            label="delivery",
        )
        transaction.delete(DeliveryQueueEntry(QUEUE, delivery.delivery_id), label="queue")

    return build


# --- create ---------------------------------------------------------------


@dataclass(frozen=True)
class Audience:
    """Who a delivery goes to: every active user, one Django group, or named users."""

    kind: str
    group: str | None = None
    usernames: tuple[str, ...] = ()
    ignore_unknown: bool = False


class UnknownUsernames(ApplicationError):
    """Some usernames match no active account: reported, never silently dropped."""

    def __init__(self, unknown: list[str]):
        shown = ", ".join(unknown[:20])
        if len(unknown) > 20:
            shown = gettext("%(names)s and %(more)s more") % {"names": shown, "more": len(unknown) - 20}
        self.summary = gettext("%(count)s username(s) match no active account: %(shown)s.") % {
            "count": len(unknown),
            "shown": shown,
        }
        super().__init__(
            self.summary + " " + gettext("Fix the list, or send to the known ones only (ignore_unknown)."),
            field="audience",
        )
        self.unknown = unknown


USERNAME_SEPARATORS = re.compile(r"[,;\s]+")


def usernames_split(text: str) -> list[str]:
    """The names in one piece of text: commas, semicolons and any whitespace (line breaks
    included) separate them, as the staff form's help text says; a leading @ is dropped."""
    return [name.lstrip("@") for name in USERNAME_SEPARATORS.split(text) if name.lstrip("@")]


def clean_usernames(raw: list[str] | tuple[str, ...]) -> list[str]:
    """Every name in `raw` (each item may hold several, see usernames_split), once per
    person: names equal but for letter case are one (log-in ignores case too), the first
    spelling kept. Sorted, so resolving and chunking are deterministic."""
    names: dict[str, str] = {}
    for item in raw:
        for name in usernames_split(item or ""):
            names.setdefault(name.lower(), name)
    return sorted(names.values(), key=str.lower)


def _resolve_usernames(names: list[str]) -> Iterator[tuple[list[str], list[str]]]:
    """(user ids, unknown names as typed) per slice of at most one chunk of names.

    Matched in any letter case, as log-in matches them (project/identity/login.py: `iexact`).
    Sign-up refuses a name taken in another case, so one name is one account; were there
    two, the oldest account (lowest id) is taken, deterministically.
    """
    User = get_user_model()
    size = chunk_size()
    for start in range(0, len(names), size):
        batch = names[start : start + size]
        accounts = (
            User.objects.annotate(username_lower=Lower("username"))
            .filter(username_lower__in={name.lower() for name in batch}, is_active=True)
            .values_list("username_lower", "pk")
            .order_by("pk")
        )
        found: dict[str, int] = {}
        for username_lower, pk in accounts:
            found.setdefault(username_lower, pk)
        ids = [str(found[name.lower()]) for name in batch if name.lower() in found]
        yield ids, [name for name in batch if name.lower() not in found]


def delivery_create(
    *, title: str, body: str, url: str | None, audience: Audience, created_by: AbstractBaseUser
) -> Delivery:
    """Create a delivery in `draft`; the dispatcher (or the admin's Prepare) prepares it.

    A usernames audience is resolved now, so unknown names are reported to the
    person creating it (UnknownUsernames, a 400) unless `ignore_unknown`; its chunks
    are frozen here (the list is already in the request), before the delivery item
    exists. The delivery and its queue entry are written in one transaction, last:
    a crash before it leaves only chunks no delivery points at (they hold no
    targets, so nobody can receive anything from them).

    Twice: two deliveries (each call mints its own id).
    """
    from django.contrib.auth.models import Group

    title, body = title.strip(), body.strip()
    if not title:
        raise ApplicationError(gettext("The title is empty."), field="title")
    if not body:
        raise ApplicationError(gettext("The body is empty."), field="body")
    account_limit_enforce(name="delivery", user_id=str(created_by.pk))  # RateLimited: nothing written
    delivery_id = uuid.uuid4().hex
    # The message becomes a feed entry: the feed's bounds apply (FeedEventTooLarge is a 400).
    FeedEvent(f"delivery#{delivery_id}", "message", None, None, title, body, url or "", delivery_id)
    created_at = clock.now_iso()
    delivery = Delivery(
        delivery_id,
        title=title,
        body=body,
        url=url or None,
        audience_kind=audience.kind,
        status=DRAFT,
        created_by_id=str(created_by.pk),
        created_by_name=created_by.get_username(),
        created_at=created_at,
        updated_at=created_at,
    )
    if audience.kind == AUDIENCE_GROUP:
        if not audience.group or not Group.objects.filter(name=audience.group).exists():
            raise ApplicationError(
                gettext("No group named %(group)s.") % {"group": repr(audience.group)}, field="audience"
            )
        delivery.audience_group = audience.group
    elif audience.kind == AUDIENCE_USERNAMES:
        names = clean_usernames(audience.usernames)
        if not names:
            raise ApplicationError(gettext("The list of usernames is empty."), field="audience")
        delivery.audience_requested = len(names)
        resolved = list(_resolve_usernames(names))
        unknown = [name for _, missing in resolved for name in missing]
        if unknown and not audience.ignore_unknown:
            raise UnknownUsernames(unknown)
        seq = 0
        for user_ids, _ in resolved:
            if user_ids:
                DeliveryChunk(chunk_key(delivery_id, seq), delivery_id=delivery_id, seq=seq, user_ids=user_ids).save(
                    condition=DeliveryChunk.chunk_key.does_not_exist()
                )
                seq += 1
        delivery.chunk_count = seq
        delivery.unknown_usernames = unknown[:UNKNOWN_USERNAMES_KEPT] or None
        delivery.unknown_count = len(unknown)
    elif audience.kind != AUDIENCE_ALL:
        raise ApplicationError(
            gettext("Unknown audience kind %(kind)s.") % {"kind": repr(audience.kind)}, field="audience"
        )

    def build(transaction: LabelledTransactWrite) -> None:
        transaction.save(delivery, condition=Delivery.delivery_id.does_not_exist())
        transaction.save(
            DeliveryQueueEntry(QUEUE, delivery_id, created_at=created_at),
            condition=DeliveryQueueEntry.delivery_id.does_not_exist(),
        )

    transact(build, what="delivery_create")  # a fresh id: its conditions cannot fail
    logger.info(
        "delivery %s created by %s (audience %s%s)",
        delivery_id,
        delivery.created_by_name,
        audience.kind,
        f", {delivery.unknown_count} unknown usernames left out" if delivery.unknown_count else "",
    )
    return delivery


# --- cancel and account deletion ----------------------------------------------


def delivery_cancel(*, delivery_id: str) -> Delivery:
    """Cancel: nothing more is delivered; what was delivered stays (and stays counted).

    One transaction sets `cancelled` (condition: not done/cancelled yet) and removes
    the queue entry. Every delivery transaction checks `dispatching` on the delivery
    item, so a batch either committed before the cancel or fails after it.
    Twice: the second call changes nothing and returns the cancelled delivery.
    """
    delivery = delivery_get_consistent(delivery_id=delivery_id)
    if delivery.status in FINAL_STATUSES:
        if delivery.status == DONE:
            raise ApplicationError(gettext("This delivery is already done; it can't be cancelled."), field="status")
        return delivery

    build = finish_transaction(delivery, status=CANCELLED, condition=~Delivery.status.is_in(*FINAL_STATUSES))

    if not transact(build, what="delivery cancel").ok:
        return delivery_cancel(delivery_id=delivery_id)  # it changed meanwhile: answer from the new state
    logger.info("delivery %s cancelled", delivery_id)
    return delivery_get_consistent(delivery_id=delivery_id)


def delivery_targets_drop_for_user(*, user_id: str) -> int:
    """A user deleted their account: drop their pending targets (they receive nothing more).

    Per target, one transaction deletes it (condition: exists, and its chunk's
    targets are all written, so a preparer can't put it back) and adds 1 to the
    chunk's `skipped`, so delivered + skipped still equals the chunk's size.
    Returns how many were dropped. Twice: the second finds nothing.
    """
    dropped = 0
    for target in DeliveryTarget.query(user_id, consistent_read=True):

        def build(transaction: LabelledTransactWrite, target: DeliveryTarget = target) -> None:
            transaction.delete(target, condition=DeliveryTarget.user_id.exists(), label="target")
            transaction.update(
                DeliveryChunk(chunk_key(target.delivery_id, int(target.chunk_seq))),
                actions=[DeliveryChunk.skipped.add(1)],
                condition=(DeliveryChunk.status == CHUNK_PENDING) & (DeliveryChunk.targets_written == True),  # noqa: E712
                label="chunk",
            )

        if transact(build, what="delivery target drop").ok:
            dropped += 1
    if dropped:
        logger.info("user %s deleted: %d pending delivery target(s) dropped", user_id, dropped)
    return dropped
