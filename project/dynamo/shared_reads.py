"""Reads that many viewers share, kept for a moment in each web process.

Under load, the requests one process serves within a second read the same items again and
again: the newest comments of the timeline, the like counts of the comments everyone looks
at. Those reads are eventually consistent already (on AWS an answer may be about a second
old), so a process keeps each answer for SHARED_READ_SECONDS (default 1 s) and serves the
next requests from memory: a page then shows what was true at most that much longer ago,
and the process sends a fraction of the DynamoDB calls (and their CPU) it would.

What a person changed themselves never comes from here: their own likes and comments are
read exactly (the fresh cookies, project/http/fresh.py), so they see their own writes at once.

One read per key at a time (single flight): when a key is missing, one thread reads it and
the others that want it meanwhile wait for that answer instead of sending the same call.
A read that fails is not kept; the waiters then read for themselves. Each process keeps
its own copies (nothing is shared between processes or machines), bounded in number.
SHARED_READ_SECONDS=0 turns it off.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from cachetools import LRUCache
from django.conf import settings

T = TypeVar("T")

# A waiter gives up on a slow leader after this long and reads for itself.
_LEADER_WAIT_SECONDS = 5.0


class _Flight:
    def __init__(self) -> None:
        self.done = threading.Event()
        self.ok = False
        self.value: object = None


class SharedReads(Generic[T]):
    """Answers of one kind of read by key, each kept SHARED_READ_SECONDS (see the module)."""

    def __init__(self, *, maxsize: int) -> None:
        self._lock = threading.Lock()
        self._answers: LRUCache[Hashable, tuple[float, T]] = LRUCache(maxsize=maxsize)
        self._flights: dict[Hashable, _Flight] = {}

    def get(self, key: Hashable, read: Callable[[], T]) -> T:
        seconds = settings.SHARED_READ_SECONDS
        if seconds <= 0:
            return read()
        with self._lock:
            kept = self._answers.get(key)
            if kept is not None and kept[0] > time.monotonic():
                return kept[1]
            flight = self._flights.get(key)
            leader = flight is None
            if flight is None:
                flight = self._flights[key] = _Flight()
        if not leader:
            if flight.done.wait(_LEADER_WAIT_SECONDS) and flight.ok:
                return flight.value  # type: ignore[return-value]
            return read()
        try:
            value = read()
        except BaseException:
            with self._lock:
                self._flights.pop(key, None)
            flight.done.set()
            raise
        with self._lock:
            self._answers[key] = (time.monotonic() + seconds, value)
            self._flights.pop(key, None)
        flight.value, flight.ok = value, True
        flight.done.set()
        return value

    def clear(self) -> None:
        with self._lock:
            self._answers.clear()
