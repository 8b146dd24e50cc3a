"""Scheduling a notification e-mail in the transaction of the write it is about."""

from __future__ import annotations

import zlib

from notifications.models import MailQueue
from project.clock import clock
from project.dynamo.transactions import LabelledTransactWrite

MAIL_QUEUE_SHARDS = 4  # partitions of the `mail_queue` table, read one Query each by the sender


def mail_queue_key(*, user_id: str, source: str) -> tuple[str, str]:
    """The (shard, mail_id) of a person's mail about `source`: one item per person and source."""
    return str(zlib.crc32(user_id.encode()) % MAIL_QUEUE_SHARDS), f"{user_id}#{source}"


def mail_queue_item(*, user_id: str, kind: str, source: str, entry_id: str, due_ms: int) -> MailQueue:
    shard, mail_id = mail_queue_key(user_id=user_id, source=source)
    return MailQueue(
        shard,
        mail_id,
        user_id=user_id,
        kind=kind,
        source=source,
        entry_id=entry_id,
        due_at=due_ms,
        created_at=clock.now_ms(),
    )


def mail_queue_put(
    transaction: LabelledTransactWrite,
    *,
    user_id: str,
    kind: str,
    source: str,
    entry_id: str,
    due_ms: int,
) -> None:
    """Add to `transaction` the put of a mail to `user_id` about `source` (one TransactWrite action).

    Runs twice (a transaction retried after an ambiguous failure): the same key is put
    again, one queue item; the `sends` ledger line keyed by the same source keeps a mail
    already sent from going again. Dies half way: the transaction commits or not as a whole.
    Whether to send at all is decided again at send time (notifications/mail/sender.py).
    """
    transaction.save(
        mail_queue_item(user_id=user_id, kind=kind, source=source, entry_id=entry_id, due_ms=due_ms),
        label=f"mail:{user_id}",
    )
