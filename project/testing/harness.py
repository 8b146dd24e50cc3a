"""Threads, processes and waiting, for tests and benchmarks, on a machine of any speed.

CI is a busy 2-core machine: nothing here assumes how long anything takes. A wait ends
as soon as its condition holds and fails only after a deadline no healthy run comes
near (`WAIT_SECONDS`); threads start together behind a barrier so they really overlap.
Processes are read from /proc (Linux), so no extra dependency: bench/ imports this
module without Django.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

from project.dynamo.local import free_port

T = TypeVar("T")

# Long enough for DynamoDB Local and a Python process to start on a loaded machine;
# a wait that needs all of it is a hang, not a slow machine.
WAIT_SECONDS = 300.0


def wait_for(condition: Callable[[], T], *, what: str, seconds: float = WAIT_SECONDS, every: float = 0.05) -> T:
    """Poll `condition()` every `every` seconds until it returns something truthy; return that.

    Raises AssertionError naming `what` when it never did within `seconds`.
    """
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {seconds:.0f}s")
        time.sleep(every)


def in_threads(work: Callable[[int], T], count: int, *, seconds: float = WAIT_SECONDS) -> list[T]:
    """Run `work(0)` ... `work(count - 1)`, each in its own thread, started together; their results in order.

    The threads wait at a barrier, so they begin at once however slowly they were started.
    Any exception a thread raised is raised here (an ExceptionGroup of all of them), once
    every thread has ended; a thread still running after `seconds` is an AssertionError.
    """
    start = threading.Barrier(count)
    results: list[T | None] = [None] * count
    errors: list[Exception] = []

    def run(index: int) -> None:
        try:
            start.wait()
            results[index] = work(index)
        except Exception as error:  # raised in the caller's thread below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(n,), name=f"in_threads-{n}", daemon=True) for n in range(count)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + seconds
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    running = [thread.name for thread in threads if thread.is_alive()]
    if running:
        raise AssertionError(f"{len(running)} of {count} threads still running after {seconds:.0f}s: {running}")
    if errors:
        raise ExceptionGroup(f"{len(errors)} of {count} threads failed", errors)
    return results  # type: ignore[return-value]  # every slot was filled: no thread failed


# --- DynamoDB calls and faults ---------------------------------------------------------


@contextlib.contextmanager
def dynamodb_calls() -> Iterator[list[tuple[str, dict[str, Any]]]]:
    """Every DynamoDB request made inside the block, as (operation, its parameters), in order.

    A context manager, not a `monkeypatch`: it restores botocore's method on leaving the block,
    inside any fixture that patches the same method (`aws_read_lag`, `aws_conflicts`), which a
    monkeypatch undone after that fixture's teardown would not."""
    from unittest import mock

    from project.dynamo import wire

    real = wire.make_api_call
    made: list[tuple[str, dict[str, Any]]] = []

    def recording(client: Any, operation_name: str, api_params: dict[str, Any]) -> Any:
        made.append((operation_name, api_params))
        return real(client, operation_name, api_params)

    with mock.patch.object(wire, "make_api_call", recording):
        yield made


WireAnswer = tuple[int, dict[str, str], bytes]


@contextlib.contextmanager
def dynamodb_wire(answer: Callable[[str, bytes], WireAnswer | None]) -> Iterator[None]:
    """Every DynamoDB request sent inside the block first meets `answer(operation, body)`, on
    either path a call takes (project/dynamo/wire.py's, then botocore's for its retries):
    raise (`botocore.exceptions.EndpointConnectionError`...) to fail the connection, return
    (status, headers, body) to answer in DynamoDB's place (throttling...), or None to send it.
    This is where AWS's faults arrive, which DynamoDB Local never makes."""
    from unittest import mock

    from botocore.awsrequest import AWSResponse, HeadersDict
    from botocore.endpoint import Endpoint

    from project.dynamo import wire

    real_post = wire._Sender.post
    real_send = Endpoint._send  # type: ignore[attr-defined]  # private, pinned 1.44.5

    def post(sender: Any, operation_name: str, body: bytes) -> WireAnswer:
        answered = answer(operation_name, body)
        return answered if answered is not None else real_post(sender, operation_name, body)

    def send(endpoint: Any, request: Any) -> Any:
        operation_name = request.headers["X-Amz-Target"].decode().rpartition(".")[2]
        body = request.body if isinstance(request.body, bytes) else (request.body or "").encode()
        answered = answer(operation_name, body)
        if answered is None:
            return real_send(endpoint, request)
        status, headers, data = answered
        return AWSResponse(request.url, status, cast(Any, HeadersDict(headers)), _RawBody(data))

    with mock.patch.object(wire._Sender, "post", post), mock.patch.object(Endpoint, "_send", send):
        yield


class _RawBody:
    """What botocore reads an answer's body from (urllib3's response, here a fixed one)."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def stream(self, **_: Any) -> Iterator[bytes]:
        yield self.data


def dynamodb_error(code: str, message: str = "injected") -> WireAnswer:
    """DynamoDB's answer of error `code` (400), e.g. ProvisionedThroughputExceededException."""
    import json

    body = {"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": message}
    return 400, {"content-type": "application/x-amz-json-1.0"}, json.dumps(body).encode()


# --- processes (Linux /proc) ----------------------------------------------------------


def children(pid: int) -> list[int]:
    try:
        return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (FileNotFoundError, ProcessLookupError):
        return []


def descendants(pid: int) -> list[int]:
    """Children, their children, and so on (a process that ends meanwhile is left out)."""
    found = []
    for child in children(pid):
        found += [child, *descendants(child)]
    return found


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")
    except (FileNotFoundError, ProcessLookupError):
        return ""


def alive(pid: int) -> bool:
    """The process exists and is not a zombie (exited, waiting for its parent to reap it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


def http_status(url: str) -> int:
    """The status a GET of `url` answers; 0 when nothing answers (not listening yet, or gone)."""
    try:
        with urllib.request.urlopen(url, timeout=5) as answer:
            return int(answer.status)
    except urllib.error.HTTPError as error:
        return error.code
    except OSError:
        return 0


def served_environment(*, dynamodb_host: str, table_prefix: str, database_url: str, **settings: str) -> dict[str, str]:
    """The environment of a process that serves the site as `make run` does, against a test's or a
    benchmark's own DynamoDB tables and database: production settings (DEBUG off, a fresh
    SECRET_KEY) over plain HTTP on the loopback address, no `.env` file, this Python's
    `bin/` first on PATH, the other variables of this environment kept. `settings` adds or
    overrides variables (WEB_CONCURRENCY=..., PORT=...)."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DEBUG", "SECRET_KEY", "SECURE_"))}
    return {
        **kept,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "ENV_FILE": "/dev/null",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DEBUG": "False",
        "LOCAL_PLAIN_HTTP": "True",
        "SECRET_KEY": "served-" + uuid.uuid4().hex * 2,
        "DATABASE_URL": database_url,
        "DYNAMODB_HOST": dynamodb_host,
        "DYNAMODB_TABLE_PREFIX": table_prefix,
        "WEB_ACCESS_LOG": "",
        **settings,
    }


def worker_environment(
    *, dynamodb_host: str, table_prefix: str, database_url: str, drop: tuple[str, ...] = (), **settings: str
) -> dict[str, str]:
    """The environment of a command (`manage.py <worker> --loop`) that a test runs as a process
    of its own against the test's DynamoDB tables and database: this environment's variables
    but Django's, DEBUG, SECRET_KEY (a fresh one) and those starting with `drop`; no `.env`
    file; logs as text at INFO. `settings` adds or overrides variables."""
    kept = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DEBUG", "SECRET_KEY", *drop))}
    return {
        **kept,
        "ENV_FILE": "/dev/null",
        "SECRET_KEY": "worker-" + uuid.uuid4().hex,
        "DATABASE_URL": database_url,
        "DYNAMODB_HOST": dynamodb_host,
        "DYNAMODB_TABLE_PREFIX": table_prefix,
        "LOG_LEVEL": "INFO",
        "LOG_FORMAT": "text",
        **settings,
    }


@contextlib.contextmanager
def gunicorn_served(
    *, env: dict[str, str], port: int, log_path: Path, args: Sequence[str] = (), stop_seconds: float = 60
) -> Iterator[subprocess.Popen[bytes]]:
    """gunicorn started as `make run` starts it (`gunicorn -c config/gunicorn.py`, plus `args`) with
    `env`, answering /healthz on `port`; stopped with SIGTERM (then SIGKILL) on the way out.
    Its output goes to `log_path`; a gunicorn that exits before answering is a RuntimeError."""
    root = Path(__file__).resolve().parents[2]
    with open(log_path, "w") as log:
        server = subprocess.Popen(
            [str(Path(sys.executable).parent / "gunicorn"), "-c", "config/gunicorn.py", *args],
            cwd=root,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            wait_for(
                lambda: server.poll() is not None or http_status(f"http://127.0.0.1:{port}/healthz") == 200,
                what=f"gunicorn answering /healthz (its log: {log_path})",
            )
            if server.poll() is not None:
                raise RuntimeError(f"gunicorn did not start: see {log_path}")
            yield server
        finally:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=stop_seconds)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()


@contextlib.contextmanager
def one_worker_served(
    *, dynamodb_host: str, table_prefix: str, folder: Path, defaults: Sequence[str] = (), **settings: str
) -> Iterator[int]:
    """One gunicorn worker process serving the site as `make run` does, on `table_prefix`'s tables
    and a database file of its own in `folder` (migrated first), with rate limits off and
    `settings` over the environment; the names in `defaults` are removed from the environment so
    that the server uses its own defaults. Yields the port it answers on."""
    port = free_port()
    environment = served_environment(
        dynamodb_host=dynamodb_host,
        table_prefix=table_prefix,
        database_url=f"sqlite:///{folder / 'db.sqlite3'}",
        WEB_CONCURRENCY="1",
        RATE_LIMITS_ENABLED="False",
        PROMETHEUS_MULTIPROC_DIR=str(folder / "prometheus"),
        HOST="127.0.0.1",
        PORT=str(port),
        LOG_LEVEL="WARNING",
        **settings,
    )
    for name in defaults:
        environment.pop(name, None)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--no-input"],
        cwd=Path(__file__).resolve().parents[2],
        env=environment,
        check=True,
        capture_output=True,
        timeout=WAIT_SECONDS,
    )
    with gunicorn_served(env=environment, port=port, log_path=folder / "gunicorn.log"):
        yield port


def kill_when_held(process: subprocess.Popen[Any], marker: Path, *, log: Path, what: str, seconds: float = 300) -> None:
    """SIGKILL `process` once it has created `marker` (a test program's sign that it holds at the
    point to be killed at), so "killed half way" does not depend on the machine's speed. A process
    that exits before it holds fails the test with the end of its `log`; one that is still alive
    on the way out (the wait failed) is killed all the same."""
    try:
        wait_for(lambda: marker.exists() or process.poll() is not None, what=what, seconds=seconds)
        assert process.poll() is None, log.read_text(encoding="utf-8")[-3000:]
        process.send_signal(signal.SIGKILL)
        assert process.wait(timeout=60) == -signal.SIGKILL
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
