"""What the production web server does around the application (config/gunicorn.py calls it).

`warm_up` runs in each new gunicorn worker before it accepts a connection: it makes every
model's DynamoDB client, and a few requests to itself load what Django and botocore
otherwise load on the first real requests (URL resolver, templates, the connection pool),
so the first people a fresh worker serves are not the slow ones.
"""

from __future__ import annotations

import io
import logging
import sys
import time
from collections.abc import Callable
from typing import Any

from django.conf import settings

logger = logging.getLogger(__name__)

WARM_UP_PATHS = ("/readyz", "/", "/api/comments/")


def _environ(path: str) -> dict[str, Any]:
    host = next((h.lstrip(".") for h in settings.ALLOWED_HOSTS if "*" not in h), "localhost")
    return {
        "REQUEST_METHOD": "GET",
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": host,
        "SERVER_PORT": str(settings.PORT),
        "HTTP_HOST": host,
        "REMOTE_ADDR": "127.0.0.1",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "HTTP_ACCEPT": "text/html,application/json",
        # As if through TLS, so the production HTTPS redirect does not answer instead.
        "wsgi.url_scheme": "http" if settings.LOCAL_PLAIN_HTTP else "https",
        "wsgi.input": io.BytesIO(b""),
        "wsgi.errors": sys.stderr,
        "wsgi.version": (1, 0),
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }


def warm_up(application: Callable[..., Any], *, log: logging.Logger = logger) -> dict[str, int]:
    """Make every model's DynamoDB client, then serve WARM_UP_PATHS to `application`
    in-process; returns each path's status.

    Never raises: a worker whose DynamoDB is down still starts (and answers 503s).
    """
    started = time.monotonic()
    statuses: dict[str, int] = {}
    clients = 0
    try:
        from project.dynamo.clients import clients_make

        clients = clients_make()
    except Exception:  # each is made on its model's first call instead
        log.exception("warm-up: making the DynamoDB clients failed")
    for path in WARM_UP_PATHS:
        seen: list[str] = []

        def start_response(status: str, headers: object, exc_info: object = None, seen: list[str] = seen) -> None:
            seen.append(status)

        try:
            body = application(_environ(path), start_response)
            try:
                for _ in body:
                    pass
            finally:
                close = getattr(body, "close", None)
                if close:
                    close()
            statuses[path] = int(seen[0].split()[0]) if seen else 0
        except Exception:  # the worker must start anyway; the error is in the log
            log.exception("warm-up request to %s failed", path)
            statuses[path] = 0
    log.info(
        "worker warmed up in %.2fs (%d DynamoDB clients made): %s",
        time.monotonic() - started,
        clients,
        ", ".join(f"{path} {status}" for path, status in statuses.items()),
    )
    return statuses
