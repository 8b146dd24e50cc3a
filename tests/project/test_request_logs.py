"""Request ids on answers and log lines; JSON log lines with LOG_FORMAT=json."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.http import HttpResponse
from django.test import RequestFactory

from project.operations.logs import JsonFormatter, RequestIdFilter, RequestIdMiddleware

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.django_db
def test_a_sane_incoming_request_id_is_echoed(client):
    answer = client.get("/accounts/login/", HTTP_X_REQUEST_ID="lb-1700000000.42:abc_DEF-9")
    assert answer["X-Request-ID"] == "lb-1700000000.42:abc_DEF-9"


@pytest.mark.django_db
@pytest.mark.parametrize("incoming", ["", "has space", "x" * 129, "new\nline", "ünï"])
def test_anything_else_gets_a_new_random_id(client, incoming):
    answer = client.get("/accounts/login/", HTTP_X_REQUEST_ID=incoming)
    assert answer["X-Request-ID"] != incoming and len(answer["X-Request-ID"]) == 32
    assert client.get("/accounts/login/")["X-Request-ID"] != answer["X-Request-ID"]


def test_every_log_line_of_a_request_carries_its_id_as_json():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.addFilter(RequestIdFilter())
    handler.setFormatter(JsonFormatter())
    logger = logging.getLogger("project.tests.request_logs")
    logger.addHandler(handler)
    logger.propagate = False

    def view(request):
        logger.info("looking up %s", "something")
        try:
            raise ValueError("bad value")
        except ValueError:
            logger.exception("it failed")
        return HttpResponse("ok")

    try:
        logger.setLevel(logging.INFO)
        RequestIdMiddleware(view)(RequestFactory().get("/", HTTP_X_REQUEST_ID="req-42"))
        logger.info("after the request")
    finally:
        logger.removeHandler(handler)
    first, failed, after = (json.loads(line) for line in stream.getvalue().splitlines())
    assert first["message"] == "looking up something" and first["request_id"] == "req-42"
    assert first["level"] == "INFO" and first["logger"] == "project.tests.request_logs" and "time" in first
    assert failed["request_id"] == "req-42" and "ValueError: bad value" in failed["exception"]
    assert "request_id" not in after


def test_log_format_json_makes_every_logger_write_json_lines():
    code = "import django, logging; django.setup(); logging.getLogger('delivery.dispatch').warning('hello %s', 'json')"
    environment = {**os.environ, "LOG_FORMAT": "json", "DJANGO_SETTINGS_MODULE": "tests.settings"}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True, timeout=120
    )
    [line] = [line for line in done.stderr.splitlines() if line.strip()]
    assert json.loads(line) | {"time": None} == {
        "time": None,
        "level": "WARNING",
        "logger": "delivery.dispatch",
        "message": "hello json",
    }
