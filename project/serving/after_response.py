"""Work done after a request's answer has been sent, in the same process and thread.

`after_response(task)` queues `task` for the end of the current request: Django sends
`request_finished` when the WSGI server closes the response, after it wrote the answer,
so the person is not kept waiting for it (gunicorn, runserver and the test client all
close the response after sending it; the test client does it before returning, which
keeps tests deterministic). Outside a request (a command, a shell, a benchmark calling a
service) nothing is queued and the caller's fallback applies.

Best effort by design: a task must be something a worker also does later (the like
folder is), because a process that dies right after answering never runs it. A task
that raises is logged; the others still run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from django.core.signals import request_finished
from django.dispatch import receiver

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponse

logger = logging.getLogger(__name__)

_queued: ContextVar[list[Callable[[], None]] | None] = ContextVar("after_response", default=None)


class AfterResponseMiddleware:
    """Marks a request so that `after_response` can queue work for the moment it is answered."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        _queued.set([])
        return self.get_response(request)


def after_response(task: Callable[[], None]) -> bool:
    """Run `task` once the current request's answer is sent; False when not in a request."""
    tasks = _queued.get()
    if tasks is None:
        return False
    tasks.append(task)
    return True


@receiver(request_finished, dispatch_uid="project.serving.after_response")
def _run_queued(sender: object, **kwargs: Any) -> None:
    tasks = _queued.get()
    _queued.set(None)
    for task in tasks or ():
        try:
            task()
        except Exception:
            logger.exception("work after the response failed; its worker will do it")
