"""Hundreds of sockets trickling request bodies from one address, against the real server:
gunicorn started as `make run` starts it (config/gunicorn.py, one worker process with its
default threads, slots and bodies per address), on the suite's DynamoDB Local tables.

WEB_BODY_TIMEOUT is set long (60 s) so that a server whose threads the tricklers hold makes
the visitor wait for it; the visitor gives up at half of it. Nothing here measures a speed:
a server that keeps threads free answers the visitor in milliseconds.
"""

from __future__ import annotations

import contextlib
import http.client
import select
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from project.dynamo.local import free_port
from project.testing.harness import WAIT_SECONDS, one_worker_served

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
BODY_SECONDS = 60  # WEB_BODY_TIMEOUT for the server under test
TRICKLERS = 250
PER_ADDRESS = 8  # WEB_BODY_READS_PER_ADDRESS's default


@pytest.fixture(scope="module")
def server(dynamodb, tmp_path_factory):
    from social.models import Comment

    with one_worker_served(
        dynamodb_host=dynamodb,
        table_prefix=Comment.Meta.table_name.removesuffix("comments"),
        folder=tmp_path_factory.mktemp("slow-bodies"),
        defaults=("WEB_THREADS", "WEB_MAX_IN_FLIGHT", "WEB_BODY_READS_PER_ADDRESS"),
        WEB_BODY_TIMEOUT=str(BODY_SECONDS),
    ) as port:
        yield port


def trickle(port: int, sent: threading.Barrier, stop: threading.Event) -> bytes:
    """A POST whose headers and first 2 KB of an 8 KB body come at once, then a byte a second
    until the server answers or `stop` is set; returns the server's answer (b"" when none)."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT_SECONDS)
    answer = b""
    try:
        sock.sendall(
            b"POST /api/comments/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b'Content-Length: 8000\r\n\r\n{"body": "' + b"x" * 2048
        )
        sent.wait(WAIT_SECONDS)
        deadline = time.monotonic() + WAIT_SECONDS
        while not stop.is_set() and time.monotonic() < deadline:
            readable, _, _ = select.select([sock], [], [], 1.0)
            if readable:
                while chunk := sock.recv(65536):
                    answer += chunk
                break
            with contextlib.suppress(OSError):  # the server may have shut its side already
                sock.sendall(b"x")
    except OSError:
        pass
    finally:
        sock.close()
    return answer


def visit_while_trickling(port: int) -> tuple[int, list[bytes]]:
    """TRICKLERS sockets trickle bodies to `port` while a visitor asks for the comment list there;
    the visitor's status (a timeout past half the body deadline raises) and the tricklers' answers."""
    sent = threading.Barrier(TRICKLERS + 1)
    stop = threading.Event()
    answers: list[bytes] = []
    tricklers = [
        threading.Thread(target=lambda: answers.append(trickle(port, sent, stop)), daemon=True)
        for _ in range(TRICKLERS)
    ]
    for thread in tricklers:
        thread.start()
    try:
        sent.wait(WAIT_SECONDS)  # every trickler has sent its headers and its first 2 KB
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=BODY_SECONDS / 2)
        try:
            connection.request("GET", "/api/comments/", headers={"Accept": "application/json"})
            visitor = connection.getresponse()
            visitor.read()
        finally:
            connection.close()
    finally:
        stop.set()
        for thread in tricklers:
            thread.join(WAIT_SECONDS)
    return visitor.status, answers


def test_a_visitor_gets_a_page_while_one_address_trickles_bodies_on_250_sockets(server):
    """250 sockets of one address each send a POST's headers and 2 KB, then a byte a second.
    The process reads 8 of those bodies at once and answers the others 429 at once, so its
    threads stay free: a visitor's page comes long before any body's deadline."""
    status, answers = visit_while_trickling(server)
    assert status == 200
    refused = [answer for answer in answers if answer.startswith(b"HTTP/1.1 429 ")]
    assert len(refused) >= TRICKLERS - PER_ADDRESS, sorted({answer[:40] for answer in answers})
    assert all(b'"code":"too_many_bodies"' in answer.replace(b" ", b"") for answer in refused)


@pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx is not installed (the image installs it)")
def test_the_images_nginx_holds_the_trickled_bodies_and_passes_the_visitor(server, tmp_path):
    """deploy/nginx.conf filled in as deploy/entrypoint.sh fills it, in front of the server: the
    250 trickled bodies stay in nginx (none is answered while it trickles), the visitor's page
    comes through."""
    port = free_port()
    (tmp_path / "nginx").mkdir()
    config = (ROOT / "deploy" / "nginx.conf").read_text()
    for word, value in (("@LISTEN@", f"127.0.0.1:{port}"), ("@UPSTREAM@", f"127.0.0.1:{server}")):
        config = config.replace(word, value)
    (tmp_path / "nginx.conf").write_text(config.replace("@RUN_DIR@", str(tmp_path)))
    nginx = subprocess.Popen(
        ["nginx", "-c", str(tmp_path / "nginx.conf"), "-e", "stderr", "-g", "daemon off;"],
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            assert nginx.poll() is None, nginx.stderr.read() if nginx.stderr else b""
            with contextlib.suppress(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            assert time.monotonic() < deadline, "nginx never listened"
            time.sleep(0.1)
        status, answers = visit_while_trickling(port)
    finally:
        nginx.terminate()
        nginx.wait(WAIT_SECONDS)
    assert status == 200
    assert answers.count(b"") == TRICKLERS  # nginx still waited for every body
