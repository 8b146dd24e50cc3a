"""Recording user actions in the activity log.

Two ways in, one item shape (`user_id`, `at_key` = epoch ms + random suffix, `day_key`,
`action`, `object_id`):

- `activity_put(transaction, ...)`: the action is a DynamoDB transaction (comment, reply,
  mark read). The log item rides in it: it has its own key, so it adds no
  contention, and it commits exactly when the action does. A retried transaction
  (`project.dynamo.transactions.transact`) builds a fresh one: the cancelled attempt wrote
  nothing, so the action and its log line are in the log exactly once.
- `activity_record_keyed(...)`: the action left an outbox event (like, unlike); the line is
  written when the event is folded, under a key derived from the event: exactly once.
- `activity_record(...)` / `activity_record_many(...)`: the action is not a DynamoDB
  transaction (a view's counter UpdateItem, login and signup in the relational
  database, a delivery batch already at the 100-action limit). The log line is written
  right after the action, so it is **at most once**: a process that dies between the
  action and its log line loses that line (tests/social/test_activity_log.py shows it).
  The log is for daily statistics, where a line lost in a crash is noise; an outbox
  would double those actions' write cost for nothing staff would notice.

Logging never makes an action fail: a failure to log is caught and logged (`ERROR`,
logger `social.activity`), and the action goes on without its line. When the month's
table is missing at the moment of a write (`activity_tables` did not run before the
month began), the writer creates it and waits for it, so the line is not lost.
"""

from __future__ import annotations

import logging
import math
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pynamodb.transactions import TransactWrite

from project.clock import clock as project_clock
from social.activity.models import ACTIONS
from social.activity.month_tables import activity_model_ready
from social.activity.periods import day_key, local_time, month_of

if TYPE_CHECKING:
    from social.activity.models import ActivityItem

logger = logging.getLogger("social.activity")

BATCH_WRITE_MAX = 25


def clock() -> float:
    """Epoch seconds from the project's clock (project/clock.py); tests move it, or pass `at`."""
    return project_clock.now()


def at_key(millis: int) -> str:
    """The sort key of an action at `millis` (epoch ms): zero-padded, and a random suffix."""
    return f"{millis:013d}#{uuid.uuid4().hex[:12]}"


def _millis(at: float) -> int:
    """Epoch seconds to the millisecond they fall in (as `clock.now_ms` and the like events'
    nanosecond ids count), so lines of one person keep their order in the key. Float noise
    below a microsecond is rounded off first: 1.001 s is millisecond 1001, not 1000."""
    return math.floor(round(at * 1000, 3))


def _item(*, user_id: str, action: str, object_id: str | None, millis: int, suffix: str | None = None) -> ActivityItem:
    if action not in ACTIONS:
        raise ValueError(f"unknown activity action {action!r}")
    at = millis / 1000  # the month, the day and the key all from the same millisecond
    model = activity_model_ready(month=month_of(at))
    return model(
        user_id,
        at_key(millis) if suffix is None else f"{millis:013d}#{suffix}",
        day_key=day_key(day=local_time(at).date(), user_id=user_id),
        action=action,
        object_id=object_id or None,
    )


def activity_put(
    transaction: TransactWrite, *, user_id: str, action: str, object_id: str | None = None, at: float | None = None
) -> None:
    """Add the log line of `action` to the action's own transaction (one Put, no condition).

    If the line cannot be prepared (its month's table cannot be created), the action
    goes on without it and the failure is logged.
    """
    try:
        item = _item(user_id=user_id, action=action, object_id=object_id, millis=_millis(clock() if at is None else at))
    except Exception:
        logger.exception("activity %s of user %s not logged (table not available)", action, user_id)
        return
    transaction.save(item)


def activity_record(*, user_id: str, action: str, object_id: str | None = None, at: float | None = None) -> bool:
    """Write the log line of an action that has committed (one PutItem); False if it failed.

    At most once: called after the action, a crash in between loses the line. Twice:
    two lines (each call mints its own key). Never raises.
    """
    try:
        _item(user_id=user_id, action=action, object_id=object_id, millis=_millis(clock() if at is None else at)).save()
        return True
    except Exception:
        logger.exception("activity %s of user %s on %s not logged", action, user_id, object_id)
        return False


def activity_record_many(
    *, user_ids: Iterable[str], action: str, object_id: str | None = None, at: float | None = None
) -> int:
    """Log the same action of many users (BatchWriteItem, 25 a request); returns how many.

    At most once, like `activity_record`; never raises.
    """
    at = clock() if at is None else at
    written = 0
    try:
        items = [_item(user_id=user_id, action=action, object_id=object_id, millis=_millis(at)) for user_id in user_ids]
        if not items:
            return 0
        with type(items[0]).batch_write() as batch:
            for item in items:
                batch.save(item)
                written += 1
    except Exception:
        logger.exception("activity %s of %d users on %s not (all) logged", action, written, object_id)
    return written


@dataclass(frozen=True)
class ActivityLine:
    """An action recorded from an outbox event: its key is the event's (`millis`, `suffix`)."""

    user_id: str
    action: str
    object_id: str | None
    millis: int
    suffix: str


def activity_record_keyed(*, lines: Iterable[ActivityLine]) -> int:
    """Write lines whose keys come from the events they record (BatchWriteItem, plain puts).

    Exactly one line per event however often it runs: writing a line again puts the same
    item under the same key. The like's fold writes its likers' lines this way
    (social/fold_effects.py), so a like's own transaction carries no log line (a
    plain put and its `by_day` entry cost 2 write units, half a transactional one); the
    line has the like's time and lands when the like is folded. Never raises: lines that
    cannot be written are logged (`ERROR`) and lost, as `activity_record`'s. Returns how many.
    """
    by_model: dict[type[ActivityItem], list[ActivityItem]] = {}
    for line in lines:
        try:
            item = _item(
                user_id=line.user_id,
                action=line.action,
                object_id=line.object_id,
                millis=line.millis,
                suffix=line.suffix,
            )
        except Exception:
            logger.exception("activity %s of user %s not logged (table not available)", line.action, line.user_id)
            continue
        by_model.setdefault(type(item), []).append(item)
    written = 0
    for model, items in by_model.items():
        try:
            with model.batch_write() as batch:
                for item in items:
                    batch.save(item)
            written += len(items)
        except Exception:
            logger.exception("%d activity line(s) of %s not logged", len(items), model.Meta.table_name)
    return written
