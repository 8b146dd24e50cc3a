"""Log lines that name their request: the request id middleware, its logging filter, and the
JSON lines formatter (LOG_FORMAT=json).

Under supervisord (`make run`, the container's default role) every line starts with the
name of the program that wrote it (`process_prefix`), as the programs share one output.

A request keeps a sane incoming `X-Request-ID` (what a proxy or load balancer set: 1 to
128 letters, digits and `._:-`), or gets a new random one; the answer echoes it in
`X-Request-ID`, and every log line written while the request runs carries it. Lines written
outside a request (the workers) carry `-`. Threads a view starts do not inherit it.
"""

from __future__ import annotations

import contextvars
import json
import logging
import os
import re
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.http import HttpRequest, HttpResponse

REQUEST_ID_HEADER = "X-Request-ID"
SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,128}")
NO_REQUEST = "-"

# The longest program name in deploy/supervisord.conf: the lines of all of them line up.
PROCESS_NAME_WIDTH = 20


def process_name() -> str:
    """The supervisord program this process belongs to (supervisord sets SUPERVISOR_PROCESS_NAME
    for each program, inherited by gunicorn's workers); empty outside supervisord."""
    return os.environ.get("SUPERVISOR_PROCESS_NAME", "")


def process_prefix() -> str:
    """`fold_like_events     | ` for a line written under supervisord, empty elsewhere; a
    logging format string (a `%` is doubled)."""
    name = process_name()
    return f"{name:<{PROCESS_NAME_WIDTH}} | ".replace("%", "%%") if name else ""


_request_id: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default=NO_REQUEST)


class RequestIdMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        incoming = request.headers.get(REQUEST_ID_HEADER, "")
        request_id = incoming if SANE_REQUEST_ID.fullmatch(incoming) else uuid.uuid4().hex
        # For whatever handles the request (Django's request has no such attribute).
        request.request_id = request_id  # type: ignore[attr-defined]
        token = _request_id.set(request_id)
        try:
            response = self.get_response(request)
        finally:
            _request_id.reset(token)
        response[REQUEST_ID_HEADER] = request_id
        return response


class RequestIdFilter(logging.Filter):
    """Puts the current request's id on every record as `request_id`."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.request_id = _request_id.get()
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC), level, logger, message, request_id, exception, and
    under supervisord the program (`process`)."""

    def format(self, record: logging.LogRecord) -> str:
        document = {
            "time": datetime.fromtimestamp(record.created, tz=UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        if process := process_name():
            document["process"] = process
        request_id = getattr(record, "request_id", NO_REQUEST)
        if request_id != NO_REQUEST:
            document["request_id"] = request_id
        if record.exc_info:
            document["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            document["stack"] = self.formatStack(record.stack_info)
        return json.dumps(document, ensure_ascii=False, default=str)
