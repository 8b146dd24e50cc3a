"""Scheduling a notification (e-mail, or Web Push) in the transaction of the write it is about.

One queue for every channel: an item names its `channel`, and each channel's items live in
shards of their own (e-mail `0`..`3`, push `push#0`..`push#3`), so each channel's worker
Queries only its own and a slow SMTP server never holds up a push.
"""

from __future__ import annotations

import zlib

from notifications.models import MailQueue
from project.clock import clock
from project.dynamo.transactions import LabelledTransactWrite

MAIL_QUEUE_SHARDS = 4  # partitions of the `mail_queue` table per channel, read one Query each by the sender
EMAIL = "email"
PUSH = "push"
QUEUE_CHANNELS = (EMAIL, PUSH)


def queue_shards(channel: str = EMAIL) -> list[str]:
    """The `mail_queue` partitions of one channel's items (e-mail's keep their historic names)."""
    prefix = "" if channel == EMAIL else f"{channel}#"
    return [f"{prefix}{shard}" for shard in range(MAIL_QUEUE_SHARDS)]


def mail_queue_key(*, user_id: str, source: str, channel: str = EMAIL) -> tuple[str, str]:
    """The (shard, mail_id) of a person's item about `source` on `channel`: one per person, source and channel."""
    return queue_shards(channel)[zlib.crc32(user_id.encode()) % MAIL_QUEUE_SHARDS], f"{user_id}#{source}"


def mail_queue_item(
    *, user_id: str, kind: str, source: str, entry_id: str, due_ms: int, channel: str = EMAIL
) -> MailQueue:
    shard, mail_id = mail_queue_key(user_id=user_id, source=source, channel=channel)
    return MailQueue(
        shard,
        mail_id,
        user_id=user_id,
        kind=kind,
        source=source,
        entry_id=entry_id,
        due_at=due_ms,
        created_at=clock.now_ms(),
        channel=channel,
    )


def mail_queue_put(
    transaction: LabelledTransactWrite,
    *,
    user_id: str,
    kind: str,
    source: str,
    entry_id: str,
    due_ms: int,
    channel: str = EMAIL,
) -> None:
    """Add to `transaction` the put of a mail (or push) to `user_id` about `source` (one TransactWrite action).

    Runs twice (a transaction retried after an ambiguous failure): the same key is put
    again, one queue item; the `sends` ledger line keyed by the same source keeps a mail
    already sent from going again. Dies half way: the transaction commits or not as a whole.
    Whether to send at all is decided again at send time (notifications/mail/sender.py).
    """
    transaction.save(
        mail_queue_item(user_id=user_id, kind=kind, source=source, entry_id=entry_id, due_ms=due_ms, channel=channel),
        label=f"{'mail' if channel == EMAIL else channel}:{user_id}",
    )
