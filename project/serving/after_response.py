"""Work done after a request's answer has been sent, in the same process and thread.

`after_response(task)` queues `task` for the end of the current request: Django sends
`request_finished` when the WSGI server closes the response, after it wrote the answer,
so the person is not kept waiting for it (gunicorn, runserver and the test client all
close the response after sending it; the test client does it before returning, which
keeps tests deterministic). Outside a request (a command, a shell, a benchmark calling a
service) nothing is queued and the caller's fallback applies.

The work stays inside the process's budget: the request keeps its slot (WEB_MAX_IN_FLIGHT,
project/serving/shedding.py) until its queued work has run (`after_response_hold`), so an
overloaded process refuses newcomers rather than piling up work behind its answers. Each task
runs in the context it was queued in: its log lines carry the request's id, its DynamoDB
units count to the request's route.

Best effort by design: a task must be something a worker also does later (the like
folder is), because a process that dies right after answering never runs it. A task
that raises is logged; the others still run.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.core.signals import request_finished
from django.dispatch import receiver

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponse

logger = logging.getLogger(__name__)


@dataclass
class _Queue:
    """One request's work for after its answer, each task with the context it was queued in."""

    tasks: list[tuple[contextvars.Context, Callable[[], None]]] = field(default_factory=list)
    release: Callable[[], None] | None = None  # called once the tasks have run (the slot)

    def released(self) -> None:
        release, self.release = self.release, None
        if release is not None:
            release()


_queued: ContextVar[_Queue | None] = ContextVar("after_response", default=None)


class AfterResponseMiddleware:
    """Marks a request so that `after_response` can queue work for the moment it is answered."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        earlier = _queued.get()
        if earlier is not None and earlier.release is not None:  # a response the server never closed
            logger.warning("work queued after an earlier answer never ran; its slot is given back")
            earlier.released()
        _queued.set(_Queue())
        return self.get_response(request)


def after_response(task: Callable[[], None]) -> bool:
    """Run `task` once the current request's answer is sent; False when not in a request."""
    queue = _queued.get()
    if queue is None:
        return False
    queue.tasks.append((contextvars.copy_context(), task))
    return True


def after_response_hold(release: Callable[[], None]) -> bool:
    """When work is queued for after the current answer, call `release` once it has run and
    answer True; else False (nothing queued: the caller releases now)."""
    queue = _queued.get()
    if queue is None or not queue.tasks:
        return False
    queue.release = release
    return True


@receiver(request_finished, dispatch_uid="project.serving.after_response")
def _run_queued(sender: object, **kwargs: Any) -> None:
    queue = _queued.get()
    _queued.set(None)
    if queue is None:
        return
    try:
        for context, task in queue.tasks:  # a task may queue another: it runs too
            try:
                context.run(task)
            except Exception:
                logger.exception("work after the response failed; its worker will do it")
    finally:
        queue.released()
