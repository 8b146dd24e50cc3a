"""Bursts and slow clients against the real server: gunicorn started as `make run` starts it
(config/gunicorn.py, one worker process with its default threads and slots), on the suite's
DynamoDB Local tables and a database file of its own.

The bound a busy machine could break is set far out of reach here (the queue's wait): what is
checked is the mechanism, never a speed. bench/burst.py measures the
defaults' figures.
"""

from __future__ import annotations

import contextlib
import http.client
import select
import socket
import threading
import time
from pathlib import Path

import pytest

from project.testing.harness import WAIT_SECONDS, in_threads, one_worker_served

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SLOTS = 8  # WEB_MAX_IN_FLIGHT's default; the threads are config/gunicorn.py's default (5 x)
BODY_SECONDS = 5  # WEB_BODY_TIMEOUT for the server under test
TRICKLERS = 32


@pytest.fixture(scope="module")
def server(dynamodb, tmp_path_factory):
    from social.models import Comment

    # The comment list reads its authors' names (comments other tests left may be listed).
    with one_worker_served(
        dynamodb_host=dynamodb,
        table_prefix=Comment.Meta.table_name.removesuffix("comments"),
        folder=tmp_path_factory.mktemp("served"),
        defaults=("WEB_THREADS",),  # config/gunicorn.py's default
        WEB_MAX_IN_FLIGHT=str(SLOTS),
        WEB_QUEUE_TIMEOUT=str(WAIT_SECONDS),
        WEB_BODY_TIMEOUT=str(BODY_SECONDS),
        # The tricklers here are one address: each gets a thread (test_slow_bodies_served.py
        # checks the bound on one address's bodies).
        WEB_BODY_READS_PER_ADDRESS=str(TRICKLERS),
    ) as port:
        yield port


def get(port: int, path: str = "/api/comments/") -> int:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=WAIT_SECONDS)
    try:
        connection.request("GET", path, headers={"Accept": "application/json"})
        answer = connection.getresponse()
        answer.read()
        return answer.status
    finally:
        connection.close()


def test_a_burst_of_four_times_the_slots_on_an_idle_server_is_answered_without_a_503(server):
    statuses = in_threads(lambda index: get(server), 4 * SLOTS)
    assert statuses == [200] * (4 * SLOTS)


def trickle(port: int, started: threading.Barrier) -> bytes:
    """A POST whose headers come at once and whose body comes a byte a second, as long as the
    server reads; returns the server's answer (b"" when it closed without one)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT_SECONDS)
    answer = b""
    try:
        sock.sendall(
            b"POST /api/comments/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1000\r\n\r\n{"
        )
        started.wait(WAIT_SECONDS)
        deadline = time.monotonic() + WAIT_SECONDS
        while time.monotonic() < deadline:
            readable, _, _ = select.select([sock], [], [], 1.0)
            if readable:
                break
            with contextlib.suppress(OSError):  # the server may have shut its side already
                sock.sendall(b" ")
        while chunk := sock.recv(65536):
            answer += chunk
    except OSError:
        pass
    finally:
        sock.close()
    return answer


def test_clients_trickling_their_bodies_do_not_shut_a_visitor_out(server):
    """32 connections send a POST's headers, then a byte a second: each holds a thread until
    WEB_BODY_TIMEOUT and is answered 408, while a visitor asking meanwhile gets 200 each time."""
    started = threading.Barrier(TRICKLERS + 1)
    answers: list[bytes] = []
    tricklers = [
        threading.Thread(target=lambda: answers.append(trickle(server, started)), daemon=True) for _ in range(TRICKLERS)
    ]
    for thread in tricklers:
        thread.start()
    started.wait(WAIT_SECONDS)  # every trickler has sent its headers
    visits = []
    while any(thread.is_alive() for thread in tricklers) or not visits:
        visits.append(get(server))
    for thread in tricklers:
        thread.join(WAIT_SECONDS)
    assert visits and set(visits) == {200}, visits
    assert len(answers) == TRICKLERS
    assert all(answer.startswith(b"HTTP/1.1 408 ") for answer in answers), [answer[:40] for answer in answers]
    assert all(b'"code":"body_timeout"' in answer.replace(b" ", b"") for answer in answers)
