"""Reads of the workers' heartbeats: each worker's state for `manage.py health`, the admin
System page and /metrics (docs/how-to/operate.md)."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from project.clock import clock
from project.models import WorkerHeartbeat

# The polling workers, each a management command run with --loop (programs of deploy/supervisord.conf).
WORKERS = (
    "fold_like_events",
    "aggregate_counters",
    "process_feed_retries",
    "dispatch_deliveries",
    "rollup_activity",
    "mail_notifications",
    "send_push",
    "erase_accounts",
)

OK = "ok"
STALE = "stale"
MISSING = "missing"


@dataclass(frozen=True)
class WorkerStatus:
    worker: str
    state: str  # ok, stale, missing
    instance: str | None = None  # <host>:<pid>; None when no process runs the worker
    beat_at: float | None = None
    age_seconds: float | None = None  # since the last heartbeat
    cycle_at: float | None = None
    cycle_seconds: float | None = None
    backlog_label: str = ""
    backlog: int | None = None
    backlog_capped: bool = False
    lag_seconds: float | None = None

    @property
    def healthy(self) -> bool:
        return self.state == OK

    @property
    def backlog_text(self) -> str:
        if self.backlog is None:
            return "-"
        return f"{self.backlog}{'+' if self.backlog_capped else ''}"


def _current(items: list[WorkerHeartbeat], now: float) -> list[WorkerHeartbeat]:
    """Unexpired heartbeats, the newest per host: an older process of the same worker on
    the same host was replaced (restarted by the process manager), not lost."""
    newest: dict[str, WorkerHeartbeat] = {}
    for item in items:
        if item.expires_at is not None and item.expires_at.timestamp() <= now:
            continue  # TTL deletes it within days; it is gone for readers now
        kept = newest.get(item.host)
        if kept is None or item.beat_at > kept.beat_at:
            newest[item.host] = item
    return sorted(newest.values(), key=lambda item: item.instance)


def worker_statuses(*, now: float | None = None, stale_seconds: float | None = None) -> list[WorkerStatus]:
    """Each worker's processes (one row per host running it), or one `missing` row.

    Cost: one Query per worker (WORKERS), each reading a few hundred-byte items: 0.5 RCU each.
    Stale: the last heartbeat is older than WORKER_STALE_SECONDS.
    """
    now = clock.now() if now is None else now
    stale_seconds = settings.WORKER_STALE_SECONDS if stale_seconds is None else stale_seconds
    statuses = []
    for worker in WORKERS:
        items = _current(list(WorkerHeartbeat.query(worker)), now)
        if not items:
            statuses.append(WorkerStatus(worker=worker, state=MISSING))
        for item in items:
            age = max(0.0, now - float(item.beat_at))
            statuses.append(
                WorkerStatus(
                    worker=worker,
                    state=STALE if age > stale_seconds else OK,
                    instance=item.instance,
                    beat_at=float(item.beat_at),
                    age_seconds=age,
                    cycle_at=None if item.cycle_at is None else float(item.cycle_at),
                    cycle_seconds=None if item.cycle_seconds is None else float(item.cycle_seconds),
                    backlog_label=item.backlog_label,
                    backlog=None if item.backlog is None else int(item.backlog),
                    backlog_capped=bool(item.backlog_capped),
                    lag_seconds=None if item.lag_seconds is None else float(item.lag_seconds),
                )
            )
    return statuses
