"""Delivering a message to a batch of a chunk's targets (`targets_deliver`): each target's
feed write, the delete of its target item, and the mail and push it wants, in as few
transactions as DynamoDB's limits allow (guarantee 2 of `delivery/services.py`: a message
is delivered only in a transaction that also deletes the user's target item).
delivery/dispatch.py leases the chunks and calls it batch by batch.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings

from delivery.models import CHUNK_PENDING, DISPATCHING, Delivery, DeliveryChunk, DeliveryTarget, chunk_key
from delivery.services import TRANSACTION_ACTIONS_MAX
from notifications.feed.events import FeedEvent
from notifications.feed.merge import FeedWrite, feed_write_compute
from notifications.feed.selectors import feed_read_many
from notifications.mail.queue import EMAIL, PUSH, mail_queue_put
from notifications.preferences.selectors import preferences_get_many
from project.clock import clock
from project.dynamo.retry import backoff_sleep
from project.dynamo.transactions import LabelledTransactWrite, transact
from project.errors import Conflict, Throttled
from social.live import live_signal, live_user

# Labels of a batch transaction's actions (`targets_deliver`).
DELIVERY_CHECK = "delivery"
CHUNK_COUNT = "chunk"


def _target(user_id: str) -> tuple[str, str]:
    return ("target", user_id)


def _feed(user_id: str) -> tuple[str, str]:
    return ("feed", user_id)


def delivery_feed_event(delivery: Delivery) -> FeedEvent:
    """The feed entry a delivery becomes: one event id per delivery, so a second merge is a no-op."""
    return FeedEvent(
        event_id=f"delivery#{delivery.delivery_id}",
        kind="message",
        actor_id=None,
        rollup_key=None,
        delivery_id=delivery.delivery_id,  # the entry shows the delivery's title and body, read when shown
    )


@dataclass
class BatchResult:
    delivered: list[str] = field(default_factory=list)
    gone: list[str] = field(default_factory=list)  # target no longer exists: someone else did it
    deferred: list[str] = field(default_factory=list)  # kept conflicting: try again later
    cancelled: bool = False  # the delivery is no longer dispatching

    def absorb(self, sub: BatchResult) -> bool:
        """Adds a sub-batch's result to this one; True when it found the delivery cancelled."""
        self.delivered += sub.delivered
        self.gone += sub.gone
        self.deferred += sub.deferred
        self.cancelled = self.cancelled or sub.cancelled
        return sub.cancelled


FEED_ATTEMPTS = 5


def _prepare_feed_writes(user_ids: list[str], event: FeedEvent) -> dict[str, FeedWrite]:
    """Each target's feed with the event applied: one consistent BatchGetItem for the batch."""
    feeds = feed_read_many(user_ids=user_ids)
    return {user_id: feed_write_compute(feed=feeds[user_id], event=event) for user_id in user_ids}


def channels_wanted(user_ids: list[str]) -> tuple[set[str], set[str]]:
    """The targets who want staff messages by e-mail, and by push: one BatchGetItem of their
    preferences per 100 (strongly consistent: someone who turned it off a moment ago gets none)."""
    found = preferences_get_many(user_ids=user_ids)
    return (
        {user_id for user_id, prefs in found.items() if prefs.wants("message", "email")},
        {user_id for user_id, prefs in found.items() if prefs.wants("message", "push")},
    )


def targets_deliver(
    *,
    delivery_id: str,
    seq: int,
    user_ids: list[str],
    event: FeedEvent,
    mailed: set[str] | None = None,
    pushed: set[str] | None = None,
) -> BatchResult:
    """Deliver to `user_ids` (targets of chunk `seq`) in as few transactions as possible.

    One transaction per batch: a condition check that the delivery is still
    `dispatching` (so nothing is delivered after a cancel commits), an ADD of the
    batch size to the chunk's `delivered`, and per target the delete of its target
    item (condition: exists) plus its version-conditioned feed write, and for a target
    who wants staff messages by e-mail (`mailed`, read once for the batch when not
    given) the mail's queue item: the message and the promise to mail it commit
    together, so each target's mail is scheduled exactly once, as its message is
    delivered exactly once (notifications/mail/services.py sends it at most once). A
    batch that would exceed the 100 actions of a transaction is split. When DynamoDB
    cancels it, the reasons say which target failed: targets already gone are
    dropped (someone delivered them), feeds that moved are re-read, the rest goes
    again; when conflicts persist the batch is split in halves, down to single
    targets, and a single target that still fails is deferred, so one conflict
    never stalls the others.

    Twice or concurrently: the second transaction for a target finds it gone. Dies
    half way: each transaction is all or nothing; what did not commit is still
    pending and is found by the next consistent read of the chunk. A committed batch
    is signalled to its recipients' open pages with one put (best effort: a death
    before it, and they see the badge at their next full answer).
    """
    result = BatchResult()
    remaining = list(user_ids)
    if mailed is None or pushed is None:
        wanted_mail, wanted_push = channels_wanted(remaining)
        mailed = wanted_mail if mailed is None else mailed
        pushed = wanted_push if pushed is None else pushed
    due_ms = clock.now_ms() + int(settings.NOTIFY_EMAIL_DELAY) * 1000

    def deliver_part(part: list[str]) -> bool:
        """Deliver `part` on its own into `result`; True when it found the delivery cancelled."""
        sub = targets_deliver(
            delivery_id=delivery_id, seq=seq, user_ids=part, event=event, mailed=mailed, pushed=pushed
        )
        return result.absorb(sub)

    def deliver_halves(targets: list[str]) -> BatchResult:
        """Deliver each half of `targets` on its own (stopping at a cancel): all of the batch is done."""
        half = len(targets) // 2
        for part in (targets[:half], targets[half:]):
            if deliver_part(part):
                break
        return result

    for attempt in range(FEED_ATTEMPTS):
        if not remaining:
            return result
        writes = _prepare_feed_writes(remaining, event)

        def mails(user_id: str, write: FeedWrite) -> bool:
            return user_id in mailed and not write.already_applied and write.entry_id is not None

        def pushes(user_id: str, write: FeedWrite) -> bool:
            return user_id in pushed and not write.already_applied and write.entry_id is not None

        actions = 2 + sum(
            1 + write.action_count + mails(user_id, write) + pushes(user_id, write) for user_id, write in writes.items()
        )
        if actions > TRANSACTION_ACTIONS_MAX:
            if len(remaining) == 1:
                raise ValueError(f"one target needs {actions} actions (max {TRANSACTION_ACTIONS_MAX})")
            return deliver_halves(remaining)

        def build(transaction: LabelledTransactWrite, writes: dict[str, FeedWrite] = writes) -> None:
            transaction.condition_check(
                Delivery, delivery_id, condition=Delivery.status == DISPATCHING, label=DELIVERY_CHECK
            )
            transaction.update(
                DeliveryChunk(chunk_key(delivery_id, seq)),
                actions=[DeliveryChunk.delivered.add(len(writes))],
                condition=DeliveryChunk.status == CHUNK_PENDING,
                label=CHUNK_COUNT,
            )
            for user_id, write in writes.items():
                transaction.delete(
                    DeliveryTarget(user_id, delivery_id),
                    condition=DeliveryTarget.user_id.exists(),
                    label=_target(user_id),
                )
                # Nothing to write when the event is already in the feed (a second
                # line of defence): deleting the target is all that is left to do.
                write.add_to(transaction, label=_feed(user_id))
                # A mail waits NOTIFY_EMAIL_DELAY (a read in the meantime cancels it); a push goes now.
                for channel, wanted, due in ((EMAIL, mails, due_ms), (PUSH, pushes, clock.now_ms())):
                    if wanted(user_id, write):
                        mail_queue_put(
                            transaction,
                            user_id=user_id,
                            kind="message",
                            source=event.event_id,
                            entry_id=str(write.entry_id),
                            due_ms=due,
                            channel=channel,
                        )

        try:
            outcome = transact(build, what="delivery batch")
        except (Conflict, Throttled):
            if len(remaining) == 1:
                result.deferred.extend(remaining)
                return result
            return deliver_halves(remaining)
        if outcome.ok:
            result.delivered.extend(remaining)
            # One signal for the batch: the recipients' open pages show the badge (social/live.py).
            signalled = [uid for uid, each in writes.items() if each.count_changed and not each.already_applied]
            live_signal(live_user(uid) for uid in signalled)
            return result
        failed = set(outcome.failed_labels)  # conditions that failed
        hit = {action.label for action in outcome.cancelled_actions}  # any reason (a conflict too)
        if DELIVERY_CHECK in failed:
            result.cancelled = True
            return result
        gone = [user_id for user_id in remaining if _target(user_id) in failed]
        result.gone.extend(gone)
        remaining = [user_id for user_id in remaining if user_id not in gone]
        moved = [user_id for user_id in remaining if {_target(user_id), _feed(user_id)} & hit]
        if moved and len(moved) < len(remaining):
            # Deliver the others now, without the feeds that moved under us: a busy
            # feed must not hold its whole batch back.
            others = [user_id for user_id in remaining if user_id not in moved]
            if deliver_part(others):
                return result
            remaining = moved
        if moved:
            backoff_sleep(attempt)  # re-read the feeds that moved after a short pause
    result.deferred.extend(remaining)
    return result
