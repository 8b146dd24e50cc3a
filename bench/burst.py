"""Bursts, overload and slow clients against the site served as `make run` serves it: gunicorn
(`gunicorn -c config/gunicorn.py`, its default processes, threads and slots, production settings
over plain HTTP on the loopback address) on the bench's own DynamoDB Local, with 20 comments.

    .venv/bin/python bench/burst.py [--overload-seconds 10] [--trickle-seconds 25]

1. Bursts on an idle instance: 4x a process's slots (WEB_MAX_IN_FLIGHT) of GET /api/comments/
   at once, a few times with a pause between; and 64 reads, 32 at a time. The 503s (the aim: 0)
   and the answers' latency.
2. Sustained overload: closed-loop clients (each asks again as soon as it is answered, on its
   own keep-alive connection, ignoring Retry-After: harsher than any browser) at 4x and 8x the
   instance's slots. Refusal latency p50/p95 (the aim: at most 50 ms) and the accepted answers'
   p50/p95/p99 (the aim: p99 at most 1 s).
3. Slow clients: 32 connections send a POST's headers and then one body byte every 5 s (each
   is answered 408 at WEB_BODY_TIMEOUT and starts again at once), while a visitor reads the
   comment list twice a second: the visitor's statuses and latency, beside the same visitor
   on the idle instance.

The machine is shared with DynamoDB Local and the clients (2 cores): read the ratios and the
counts more than the absolute times.
"""

from __future__ import annotations

import argparse
import contextlib
import http.client
import os
import runpy
import select
import socket
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

# A file, not :memory:: the server's process must see the users made here.
os.environ.setdefault("DATABASE_URL", f"sqlite:///{tempfile.mkdtemp(prefix='bench-burst-')}/db.sqlite3")

from _setup import bench_environment

from project.testing.harness import gunicorn_served, served_environment

ROOT = Path(__file__).resolve().parent.parent
PATH = "/api/comments/"
ACCESS_LOG = Path(tempfile.mkdtemp(prefix="bench-burst-access-")) / "access.log"


def server_side() -> dict[int, list[float]]:
    """The access log's answers since the last call: status -> seconds each took in gunicorn."""
    seen = server_side.__dict__.setdefault("seen", 0)
    lines = ACCESS_LOG.read_text().splitlines() if ACCESS_LOG.exists() else []
    server_side.seen = len(lines)  # type: ignore[attr-defined]
    found: dict[int, list[float]] = {}
    for line in lines[seen:]:
        parts = line.split()
        if len(parts) >= 2 and parts[-2].isdigit():
            found.setdefault(int(parts[-2]), []).append(float(parts[-1]))
    return found


def pct(samples: list[float], fraction: float) -> float:
    if not samples:
        return float("nan")
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] * 1000


def latencies(samples: list[float]) -> str:
    if not samples:
        return "none"
    return (
        f"p50 {pct(samples, 0.5):.0f} / p95 {pct(samples, 0.95):.0f} / p99 {pct(samples, 0.99):.0f} "
        f"/ max {max(samples) * 1000:.0f} ms"
    )


@contextlib.contextmanager
def served(host: str, table_prefix: str):
    """gunicorn with config/gunicorn.py's defaults; yields (port, processes, slots per process)."""
    from project.dynamo import local as dynamo_local

    folder = Path(tempfile.mkdtemp(prefix="bench-burst-web-"))
    port = dynamo_local.free_port()
    env = served_environment(
        dynamodb_host=host,
        table_prefix=table_prefix,
        database_url=os.environ["DATABASE_URL"],
        RATE_LIMITS_ENABLED="False",
        PROMETHEUS_MULTIPROC_DIR=str(folder / "prometheus"),
        HOST="127.0.0.1",
        PORT=str(port),
        LOG_LEVEL="WARNING",
        WEB_ACCESS_LOG="",
    )
    for name in ("WEB_CONCURRENCY", "WEB_THREADS", "WEB_MAX_IN_FLIGHT", "WEB_QUEUE_TIMEOUT", "WEB_BODY_TIMEOUT"):
        env.pop(name, None)  # the defaults, as shipped
    config = runpy.run_path(str(ROOT / "config/gunicorn.py"))  # the same file gunicorn reads
    # Each answer's status and the time gunicorn took (from the parsed request to the answer
    # written): the server's side of the latencies, without the clients' own.
    access = ("--access-logfile", str(ACCESS_LOG), "--access-logformat", "%(s)s %(L)s")
    with gunicorn_served(env=env, port=port, log_path=folder / "gunicorn.log", args=access, stop_seconds=30):
        from django.conf import settings

        print(
            f"gunicorn: {config['workers']} processes x {config['threads']} threads, "
            f"{settings.WEB_MAX_IN_FLIGHT} slots each; queue {settings.WEB_QUEUE_TIMEOUT:g} s, "
            f"{settings.WEB_QUEUE_TARGET * 1000:g} ms past {settings.WEB_QUEUE_INTERVAL * 1000:g} ms of overload; "
            f"body deadline {settings.WEB_BODY_TIMEOUT:g} s (log: {folder / 'gunicorn.log'})",
            flush=True,
        )
        yield port, config["workers"], settings.WEB_MAX_IN_FLIGHT


def ask(port: int, connection: http.client.HTTPConnection | None = None) -> tuple[int, float]:
    """GET the comment list (on `connection`, else a new one): (status, seconds); status 0 when dropped."""
    own = connection is None
    connection = connection or http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    started = time.perf_counter()
    try:
        connection.request("GET", PATH, headers={"Accept": "application/json"})
        answer = connection.getresponse()
        answer.read()
        status = answer.status
    except (OSError, http.client.HTTPException):
        connection.close()
        status = 0
    elapsed = time.perf_counter() - started
    if own:
        connection.close()
    return status, elapsed


def burst(port: int, size: int, at_once: int) -> list[tuple[int, float]]:
    """`size` reads, `at_once` at a time (each thread its own connection, released together)."""
    results: list[tuple[int, float]] = []
    lock = threading.Lock()
    for start in range(0, size, at_once):
        count = min(at_once, size - start)
        gate = threading.Barrier(count)

        def one(gate: threading.Barrier = gate) -> None:
            gate.wait()
            result = ask(port)
            with lock:
                results.append(result)

        threads = [threading.Thread(target=one) for _ in range(count)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    return results


def bursts(port: int, slots: int) -> None:
    print(f"\n1. Bursts on an idle instance (GET {PATH})", flush=True)
    size = 4 * slots
    refused = 0
    samples: list[float] = []
    for _ in range(5):
        results = burst(port, size, size)
        refused += sum(1 for status, _ in results if status != 200)
        samples += [seconds for _, seconds in results]
        time.sleep(1.0)  # idle again
    print(
        f"   5 bursts of {size} at once (4x a process's {slots} slots): {refused} of {5 * size} not 200; {latencies(samples)}"
    )
    results = burst(port, 64, 32)
    statuses = Counter(status for status, _ in results)
    print(f"   64 reads, 32 at a time: {dict(statuses)}; {latencies([seconds for _, seconds in results])}", flush=True)


def overload(port: int, clients: int, seconds: float) -> None:
    stop = time.monotonic() + seconds
    lock = threading.Lock()
    accepted: list[float] = []
    refused: list[float] = []
    other: Counter = Counter()

    def client() -> None:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        while time.monotonic() < stop:
            status, elapsed = ask(port, connection)
            with lock:
                if status == 200:
                    accepted.append(elapsed)
                elif status == 503:
                    refused.append(elapsed)
                else:
                    other[status] += 1
            if status == 0:
                connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        connection.close()

    server_side()
    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    time.sleep(0.5)  # the access log's last lines
    inside = server_side()
    total = len(accepted) + len(refused) + sum(other.values())
    print(
        f"   {clients} clients, {seconds:g} s: {total / seconds:.0f} answers/s, {len(accepted) / seconds:.0f} accepted/s, "
        f"{len(refused)} refused ({100 * len(refused) / max(total, 1):.0f}%), other {dict(other) or 0}\n"
        f"      refusals {latencies(refused)}\n"
        f"      accepted {latencies(accepted)}\n"
        f"      in gunicorn (from the parsed request): refusals {latencies(inside.get(503, []))}; "
        f"accepted {latencies(inside.get(200, []))}",
        flush=True,
    )


def trickler(port: int, stop: float, answers: Counter, lock: threading.Lock) -> None:
    """Headers at once, then a body byte every 5 s; after each answer, again on a new connection."""
    while time.monotonic() < stop:
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        except OSError:
            time.sleep(0.5)
            continue
        answer = b""
        try:
            sock.sendall(
                f"POST {PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                "Content-Length: 10000\r\n\r\n{".encode()
            )
            while time.monotonic() < stop:
                readable, _, _ = select.select([sock], [], [], 5.0)
                if readable:
                    break
                sock.sendall(b" ")
            if time.monotonic() < stop:
                answer = sock.recv(64)
        except OSError:
            pass
        finally:
            sock.close()
        if answer:
            with lock:
                answers[answer.split(b" ", 2)[1].decode(errors="replace")] += 1


def visitor(port: int, seconds: float) -> list[tuple[int, float]]:
    results = []
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        results.append(ask(port))
        time.sleep(0.5)
    return results


def slow_clients(port: int, seconds: float) -> None:
    print("\n3. 32 clients trickling POST bodies (a byte every 5 s) and one visitor (a read every 0.5 s)", flush=True)
    idle = visitor(port, 5)
    print(f"   the visitor on the idle instance: {latencies([s for _, s in idle])}", flush=True)
    stop = time.monotonic() + seconds
    answers: Counter = Counter()
    lock = threading.Lock()
    threads = [threading.Thread(target=trickler, args=(port, stop, answers, lock)) for _ in range(32)]
    for thread in threads:
        thread.start()
    time.sleep(1.0)  # the tricklers' headers are in
    visits = visitor(port, seconds - 2)
    for thread in threads:
        thread.join()
    statuses = Counter(status for status, _ in visits)
    print(
        f"   the visitor beside them: {dict(statuses)} of {len(visits)}; {latencies([s for _, s in visits])}\n"
        f"   the tricklers' answers: {dict(answers)}",
        flush=True,
    )


def prepare() -> None:
    from django.contrib.auth import get_user_model

    from actions.comments import comment_create

    people = [get_user_model().objects.create_user(username=f"burst{n}", password="burst-pass-2026") for n in range(5)]
    for n in range(20):
        comment_create(author_id=str(people[n % 5].pk), body=f"Burst case notes {n}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--overload-seconds", type=float, default=10.0)
    parser.add_argument("--trickle-seconds", type=float, default=25.0)
    parser.add_argument("--only", choices=("bursts", "overload", "slow"), help="run one part only")
    options = parser.parse_args()
    with bench_environment() as host:
        from social.models import Comment

        prepare()
        with served(host, Comment.Meta.table_name.removesuffix("comments")) as (port, processes, slots):
            for _ in range(20):
                ask(port)  # warm both processes' connections
            if options.only in (None, "bursts"):
                bursts(port, slots)
            if options.only in (None, "overload"):
                print(
                    f"\n2. Sustained overload ({processes} processes x {slots} slots = {processes * slots})", flush=True
                )
                for clients in (4 * processes * slots, 8 * processes * slots):
                    overload(port, clients, options.overload_seconds)
                    time.sleep(2.0)
            if options.only in (None, "slow"):
                slow_clients(port, options.trickle_seconds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
