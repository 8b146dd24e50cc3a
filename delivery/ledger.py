"""Who was sent a delivery on which channel, and how it went (the staff Mail ledger page).

The inbox outcome comes from the delivery's own records: a person's target item still
there is `pending`; gone, with the message in their feed, `delivered`; gone without it,
`skipped` (the account was deleted or deactivated before its turn) or no longer shown (the
feed keeps its newest FEED_MAX_ENTRIES). The e-mail outcome is the person's `sends`
ledger line about the delivery (notifications/mail/selectors.py), or none (e-mail off).
"""

from __future__ import annotations

from dataclasses import dataclass

from delivery.batches import delivery_feed_event
from delivery.models import DeliveryChunk, chunk_key
from delivery.selectors import delivery_get_consistent, targets_pending
from notifications.feed.selectors import feed_read_many
from notifications.mail.selectors import LedgerLine, ledger_of_source

LEDGER_PEOPLE_MAX = 500  # people shown per delivery (the chunks in order)


@dataclass(frozen=True)
class DeliveryLedgerRow:
    user_id: str
    inbox: str  # pending, delivered, skipped or gone from the feed
    email: LedgerLine | None  # None: no mail was scheduled (e-mail off for messages)


def delivery_ledger(*, delivery_id: str, limit: int = LEDGER_PEOPLE_MAX) -> list[DeliveryLedgerRow]:
    """Per person of a delivery (at most `limit`, in chunk order): inbox and e-mail outcomes.
    NotFound for an unknown delivery. Cost: the chunks (GetItem each), the targets and feeds
    (BatchGetItem per 100 people), the ledger's `by_source` index (one Query)."""
    delivery = delivery_get_consistent(delivery_id=delivery_id)
    event = delivery_feed_event(delivery)
    chunk_count = int(delivery.chunk_count if delivery.chunk_count is not None else delivery.frozen_chunks or 0)
    people: list[str] = []
    for seq in range(chunk_count):
        if len(people) >= limit:
            break
        try:
            chunk = DeliveryChunk.get(chunk_key(delivery_id, seq), consistent_read=True)
        except DeliveryChunk.DoesNotExist:
            continue
        people += list(chunk.user_ids)
    people = people[:limit]
    pending = set(targets_pending(delivery_id=delivery_id, user_ids=people)) if people else set()
    feeds = feed_read_many(user_ids=people) if people else {}
    mails = {line.user_id: line for line in ledger_of_source(source=event.event_id)}
    rows = []
    for user_id in people:
        if user_id in pending:
            inbox = "pending"
        elif any(entry.delivery_id == delivery_id for entry in feeds[user_id].entries):
            inbox = "delivered"
        else:
            inbox = "skipped, or no longer in the feed"
        rows.append(DeliveryLedgerRow(user_id=user_id, inbox=inbox, email=mails.get(user_id)))
    return rows
