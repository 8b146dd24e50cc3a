"""The Web Push service worker, served from the site's root: a service worker controls the
pages under the path it is served from, and this one must receive pushes for the whole site."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from django.http import HttpRequest, HttpResponse
from django.views.decorators.http import require_safe

WORKER = Path(__file__).resolve().parents[1] / "static" / "notifications" / "push-worker.js"


@lru_cache(maxsize=1)
def _worker_source() -> bytes:
    return WORKER.read_bytes()


@require_safe
def push_worker(request: HttpRequest) -> HttpResponse:
    """/push-worker.js: the service worker (browsers check it for updates; never cached long)."""
    response = HttpResponse(_worker_source(), content_type="text/javascript; charset=utf-8")
    response["Cache-Control"] = "no-cache"
    response["Service-Worker-Allowed"] = "/"
    return response
