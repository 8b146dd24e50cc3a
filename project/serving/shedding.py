"""Overload: a request waits briefly for a slot, and is refused only when it could not start in time.

A process works on at most WEB_MAX_IN_FLIGHT requests at once (its slots). A request that
finds every slot busy waits for one, first come first served, for a time chosen as it
arrives, CoDel-like (Nichols and Jacobson's CoDel as Facebook applies it to server queues,
"Fail at Scale", 2015: a long wait while the queue absorbs a burst, a short one once it
stands):

- Normally a newcomer may wait up to WEB_QUEUE_TIMEOUT (1 s): the process is meeting a
  burst, and a burst of four times the slots on an idle process is served whole.
- Once the queue has stood (never empty) for longer than WEB_QUEUE_INTERVAL (0.5 s), or a
  request was refused within that interval (sustained overload: more arrives than the
  process serves), a newcomer waits at most WEB_QUEUE_TARGET (5 ms). Refusals then answer
  at once, and the requests served did not queue for long: no backlog of people who have
  given up builds behind the work. The refusals keep the process in this mode: they empty
  the queue now and then, which would otherwise let newcomers wait a second again.

The interval is longer than CoDel's 0.1 s: a burst's queue stands for several rounds of
service by nature (four times the slots took 0.3 s to drain on a busy 2-core machine, its
arrivals spread over 0.1 s or more there), and with 0.1 s parts of such bursts were refused.

A request that could not start in time gets 503 with `Retry-After` (JSON under /api/, a
short page elsewhere); the page's scripts and API clients ask again then (docs/reference/http.md).

Why queue time and not an adaptive limit (Netflix's concurrency-limits Gradient or Vegas,
Envoy's adaptive concurrency)? Those move the number of slots with the latency they
measure, to find how much a backend takes. Here the slots guard this process's own CPU
(one GIL), whose capacity does not move; most of a request's time is spent waiting on
DynamoDB, whose latency says little about that CPU, so a latency-driven limit would shrink
when DynamoDB slows down and refuse requests the process had the CPU for. Bounding the
time a request may wait absorbs bursts and keeps overload fast with three constants and
no control loop to tune.

Slow clients: a request's body (up to DATA_UPLOAD_MAX_MEMORY_SIZE, what Django reads into
memory anyway) is read before the request asks for a slot, within WEB_BODY_TIMEOUT (10 s).
A client trickling its body holds one of gunicorn's threads (there are more of them than
slots: config/gunicorn.py), never a slot; past the deadline the answer is 408 and the
connection is closed. One client address (project.http.security.client_ip, IPv6 by /64) has
at most WEB_BODY_READS_PER_ADDRESS (8) bodies being read at once in a process: the next is
answered 429 at once, its connection closed unread, so one address trickling bodies on
hundreds of sockets holds 8 threads, not all of them. A buffering proxy in front
(docs/how-to/run-in-production.md, production checklist) keeps such clients away from the
process altogether.

A request that queued work for after its answer (project/serving/after_response.py: the like
fold, a mail) keeps its slot until that work has run: the work counts in the process's load.

The counts are this process's own load, not shared state: each process protects itself.
/healthz and /readyz are answered before this middleware (project.operations.health).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import socket
import threading
import time
from collections import deque
from typing import TYPE_CHECKING

from django.conf import settings
from django.http import HttpResponse

from project.clock import clock
from project.errors import error_response, retry_after_set
from project.http.guard import is_api
from project.http.security import client_ip
from project.limits.store import address_subject
from project.serving.after_response import after_response_hold

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.http import HttpRequest

RETRY_AFTER_SECONDS = 2


class _Waiter:
    __slots__ = ("event", "granted")

    def __init__(self) -> None:
        self.event = threading.Event()
        self.granted = False


class InFlight:
    """The slots of this process: `count` requests hold one, the waiters queue for the next.

    A slot that a request leaves goes straight to the oldest waiter (the count stays), so a
    newcomer never overtakes the queue.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.count = 0
        self._waiters: deque[_Waiter] = deque()
        # Since when requests have been waiting without a break, the last refusal
        # (clock.monotonic()); None: nobody waits, -inf: none yet.
        self._queued_since: float | None = None
        self._refused_at = float("-inf")

    def budget(self, *, now: float, timeout: float, interval: float, target: float) -> float:
        """How long a newcomer that finds every slot busy may wait: `target` once the queue
        has stood for longer than `interval` or a request was refused within it, else `timeout`."""
        standing = self._queued_since is not None and now - self._queued_since > interval
        return target if standing or now - self._refused_at < interval else timeout

    def enter(self, limit: int, *, timeout: float = 0.0, interval: float = 0.0, target: float = 0.0) -> bool:
        """Take a slot, waiting for one up to the budget above; False when none came in time."""
        with self._lock:
            if self.count < limit:
                self.count += 1
                return True
            now = clock.monotonic()
            wait = self.budget(now=now, timeout=timeout, interval=interval, target=target)
            if wait <= 0:
                self._refused_at = now
                return False
            waiter = _Waiter()
            self._waiters.append(waiter)
            if self._queued_since is None:
                self._queued_since = now
        if waiter.event.wait(wait):
            return True
        with self._lock:
            if waiter.granted:  # handed a slot as the wait ended
                return True
            self._waiters.remove(waiter)
            self._refused_at = clock.monotonic()
            if not self._waiters:
                self._queued_since = None
            return False

    def leave(self) -> None:
        with self._lock:
            if self._waiters:
                waiter = self._waiters.popleft()
                waiter.granted = True
                waiter.event.set()
                if not self._waiters:
                    self._queued_since = None
            else:
                self.count -= 1

    @property
    def waiting(self) -> int:
        """Requests queued for a slot now."""
        return len(self._waiters)


in_flight = InFlight()


class BodyDeadlines:
    """Ends the body reads that outlive their deadline: one thread per process, started on
    first use (after gunicorn forked the worker), shuts the socket's reading side down, which
    wakes the blocked read at once with the end of the stream.

    Real time (time.monotonic), not project.clock: the thread sleeps until the next deadline.
    """

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._reads: dict[int, tuple[float, socket.socket]] = {}
        self._expired: set[int] = set()
        self._keys = itertools.count()
        self._wake_at = float("inf")
        self._pid: int | None = None

    def watch(self, sock: socket.socket, deadline: float) -> int:
        with self._condition:
            if self._pid != os.getpid():
                self._pid = os.getpid()
                threading.Thread(target=self._run, name="body-deadlines", daemon=True).start()
            key = next(self._keys)
            self._reads[key] = (deadline, sock)
            if deadline < self._wake_at:
                self._condition.notify()
            return key

    def done(self, key: int) -> bool:
        """The read is over: True when it ended before its deadline."""
        with self._condition:
            self._reads.pop(key, None)
            if key in self._expired:
                self._expired.discard(key)
                return False
            return True

    def _run(self) -> None:
        with self._condition:
            while True:
                now = time.monotonic()
                for key, (deadline, sock) in list(self._reads.items()):
                    if deadline <= now:
                        del self._reads[key]
                        self._expired.add(key)
                        with contextlib.suppress(OSError):  # the client is gone already
                            sock.shutdown(socket.SHUT_RD)
                self._wake_at = min((deadline for deadline, _ in self._reads.values()), default=float("inf"))
                self._condition.wait(None if self._wake_at == float("inf") else self._wake_at - now)


body_deadlines = BodyDeadlines()


class BodyReaders:
    """The bodies this process is reading now, counted by client address."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, int] = {}

    def enter(self, address: str, limit: int) -> bool:
        """Count one more read from `address`; False (nothing counted) when it has `limit` already."""
        with self._lock:
            count = self._counts.get(address, 0)
            if count >= limit:
                return False
            self._counts[address] = count + 1
            return True

    def leave(self, address: str) -> None:
        with self._lock:
            count = self._counts.pop(address, 0) - 1
            if count > 0:
                self._counts[address] = count


body_readers = BodyReaders()


def _too_many_bodies(request: HttpRequest, sock: socket.socket | None) -> HttpResponse:
    """429 for a body the client's address may not start now; its connection is closed unread
    (the socket's reading side shut: gunicorn would otherwise read the rest of the body before
    the connection's next request, in a thread)."""
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RD)
    message = "Too many requests from your address are still sending their bodies; retry shortly."
    if is_api(request):
        return error_response(message, code="too_many_bodies", status=429, retry_after=str(RETRY_AFTER_SECONDS))
    page = HttpResponse(message, status=429, content_type="text/plain; charset=utf-8")
    return retry_after_set(page, str(RETRY_AFTER_SECONDS))


def _content_length(request: HttpRequest) -> int:
    try:
        return int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return 0  # project.http.guard answers 400 for /api/; Django reads no body for the rest


def body_read(request: HttpRequest) -> HttpResponse | None:
    """Read the request's body now, within WEB_BODY_TIMEOUT; an answer when it did not come whole.

    Only a body Django would hold in memory anyway (Content-Length up to
    DATA_UPLOAD_MAX_MEMORY_SIZE); a larger one is refused later (project.http.guard, Django) or,
    for a staff multipart upload, streamed by Django as usual. The deadline needs the
    connection's socket (gunicorn's `gunicorn.socket`, HTTP/1); elsewhere (the test client,
    the warm-up) the body is already in memory. Only WEB_BODY_READS_PER_ADDRESS of them at
    once per client address (429 beyond).
    """
    length = _content_length(request)
    timeout = settings.WEB_BODY_TIMEOUT
    if length <= 0 or timeout <= 0 or length > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
        return None
    sock: socket.socket | None = request.META.get("gunicorn.socket")
    if sock is not None and request.META.get("HTTP_VERSION") == "2":  # an HTTP/2 socket carries other streams
        sock = None
    address = address_subject(client_ip(request))
    limit = settings.WEB_BODY_READS_PER_ADDRESS
    if limit > 0 and not body_readers.enter(address, limit):
        return _too_many_bodies(request, sock)
    key = None if sock is None else body_deadlines.watch(sock, time.monotonic() + timeout)
    try:
        body = request.body
    except OSError:  # Django's UnreadablePostError: the connection broke
        body = b""
    finally:
        in_time = key is None or body_deadlines.done(key)
        if limit > 0:
            body_readers.leave(address)
    if len(body) >= length:
        # Whole, even if the deadline struck as the last byte came: served (the connection
        # then closes after the answer, its reading side being shut).
        return None
    if not in_time:
        message, status, code = f"The request body did not arrive within {timeout:g} seconds.", 408, "body_timeout"
    else:
        message, status, code = "The request body ended before its Content-Length.", 400, "incomplete_body"
    # No `Connection: close` (a hop-by-hop header is the server's, not the application's):
    # gunicorn finds the socket's reading side ended and closes the connection after answering.
    if is_api(request):
        return error_response(message, code=code, status=status)
    return HttpResponse(message, status=status, content_type="text/plain; charset=utf-8")


def overloaded(request: HttpRequest) -> HttpResponse:
    if is_api(request):
        message = "The server is busy, retry shortly."
        return error_response(message, code="overloaded", status=503, retry_after=str(RETRY_AFTER_SECONDS))
    message = "The site is busy right now; please try again in a moment."
    page = HttpResponse(message, status=503, content_type="text/plain; charset=utf-8")
    return retry_after_set(page, str(RETRY_AFTER_SECONDS))


class LoadSheddingMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        unread = body_read(request)
        if unread is not None:
            return unread
        limit = settings.WEB_MAX_IN_FLIGHT
        if limit <= 0:
            return self.get_response(request)
        started = in_flight.enter(
            limit,
            timeout=settings.WEB_QUEUE_TIMEOUT,
            interval=settings.WEB_QUEUE_INTERVAL,
            target=settings.WEB_QUEUE_TARGET,
        )
        if not started:
            return overloaded(request)
        try:
            response = self.get_response(request)
        except BaseException:
            in_flight.leave()
            raise
        if not after_response_hold(in_flight.leave):  # else the slot is left once that work has run
            in_flight.leave()
        return response
