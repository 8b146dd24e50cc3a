"""The one clock: wall time in seconds since the epoch, and sleeping, both replaceable in tests.

Code that needs "now" or waits calls `clock.now()` / `clock.sleep(s)` (the module-level
instance), never `time.time()` / `time.sleep()` directly, so a test swaps in a
`ManualClock` (`with clock_override(ManualClock(...)):`) and moves time instead of
sleeping. `monotonic()` is for measuring intervals within one process.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterator


class Clock:
    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)

    def utcnow(self) -> datetime:
        return datetime.fromtimestamp(self.now(), tz=UTC)

    def now_iso(self) -> str:
        """`2026-11-22T18:56:51.123456Z`: the ISO form the tables store (it sorts as text)."""
        return iso_format(self.utcnow())

    def now_ms(self) -> int:
        """Now in integer milliseconds (the feed's entry times, retry due times)."""
        return int(self.now() * 1000)

    def now_ns(self) -> int:
        """Now in integer nanoseconds (sort keys that must not collide within a second)."""
        return int(self.now() * 1e9)


def iso_format(at: datetime) -> str:
    """`at` in the ISO form the tables store: UTC, microseconds, `Z` (`2026-11-22T18:56:51.123456Z`)."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_iso(value: str) -> datetime:
    """A stored ISO time (`...Z` or `+00:00`) as an aware datetime (naive ones are taken as UTC)."""
    at = datetime.fromisoformat(value.replace("Z", "+00:00"))
    return at if at.tzinfo else at.replace(tzinfo=UTC)


class ManualClock(Clock):
    """A clock that moves only when told to; `sleep` moves it instead of waiting.

    With `step`, every reading moves it on by `step` seconds (each action a tick later).
    """

    def __init__(self, start: float = 1_800_000_000.0, *, step: float = 0.0) -> None:
        self._now = float(start)
        self._step = float(step)
        self._lock = threading.Lock()

    @classmethod
    def at(cls, iso: str) -> ManualClock:
        """A clock showing `iso` (`2026-11-22T09:00:00Z`)."""
        return cls(parse_iso(iso).timestamp())

    def now(self) -> float:
        with self._lock:
            now = self._now
            self._now += self._step
            return now

    def monotonic(self) -> float:
        return self.now()

    def sleep(self, seconds: float) -> None:
        self.advance(max(0.0, seconds))

    def advance(self, seconds: float) -> None:
        with self._lock:
            self._now += seconds


class _ClockProxy(Clock):
    """The module-level `clock`: forwards to the clock in use (the real one unless overridden)."""

    def __init__(self) -> None:
        self.current: Clock = Clock()

    def now(self) -> float:
        return self.current.now()

    def monotonic(self) -> float:
        return self.current.monotonic()

    def sleep(self, seconds: float) -> None:
        self.current.sleep(seconds)


clock = _ClockProxy()


@contextmanager
def clock_override(replacement: Clock) -> Iterator[Clock]:
    """Use `replacement` as the clock inside the block (tests)."""
    previous, clock.current = clock.current, replacement
    try:
        yield replacement
    finally:
        clock.current = previous
