"""Quiet while present: a person whose page polled (the live badge, `GET /api/live/`) within
NOTIFY_PRESENT_SECONDS sees a notification arrive in the open tab, so its push and e-mail wait
(the senders postpone them) and are dropped if the entry is read meanwhile.

Cost: the poll writes the person's `presence` item at most once per PRESENCE_WRITE_EVERY of
NOTIFY_PRESENT_SECONDS per web process (the process remembers when it last wrote), not once per
poll: a tab polling every 2 s costs one PutItem about every 20 s per process. The senders read
it with one strongly consistent GetItem per push or mail.
"""

from __future__ import annotations

import threading
from datetime import timedelta

from django.conf import settings
from pynamodb.exceptions import DoesNotExist

from notifications.models import Presence
from project.clock import clock

PRESENCE_WRITE_EVERY = 1 / 3  # of NOTIFY_PRESENT_SECONDS: a presence is never staler than this
_written: dict[str, int] = {}  # user id -> when this process last wrote their presence (ms)
_lock = threading.Lock()
_REMEMBERED_MAX = 100_000


def present_window_ms() -> int:
    return int(float(settings.NOTIFY_PRESENT_SECONDS) * 1000)


def presence_mark(*, user_id: str) -> bool:
    """The person's page polled now: put `seen_at` (one PutItem) unless this process did within
    a third of the window. True when it wrote. Twice, or from two processes: the later time
    stands (a plain put of a time; a late put of an older time makes the person look present
    for less, never longer, than they were). Dies half way: put or not; the next poll puts it."""
    window = present_window_ms()
    if window <= 0:
        return False
    now = clock.now_ms()
    with _lock:
        if now - _written.get(user_id, 0) < window * PRESENCE_WRITE_EVERY:
            return False
        if len(_written) >= _REMEMBERED_MAX:
            _written.clear()
        _written[user_id] = now
    Presence(user_id, seen_at=now, expires_at=clock.utcnow() + timedelta(days=1)).save()
    return True


def presence_forget_memory() -> None:
    """Tests: forget what this process wrote (as a new process would)."""
    with _lock:
        _written.clear()


def is_present(*, user_id: str) -> bool:
    """Whether the person's page polled within NOTIFY_PRESENT_SECONDS: one strongly consistent GetItem."""
    window = present_window_ms()
    if window <= 0:
        return False
    try:
        seen = int(Presence.get(user_id, consistent_read=True).seen_at)
    except DoesNotExist:
        return False
    return clock.now_ms() - seen < window
