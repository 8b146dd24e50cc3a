"""Complete instances of the site on one machine, each as a machine of its own would run it.

An instance is one supervisord with deploy/supervisord.conf: gunicorn and every background
worker, with its own port, control socket and metrics folder. Several instances share one
DynamoDB (a table prefix) and one PostgreSQL database, as the machines of a deployment
share the AWS account and RDS, and nothing else: no memory, no disk. `Instance.kill()` is
the machine's death: every process of the instance gets SIGKILL at once, with no chance to
release a lease or finish a request. Used by tests/project/test_two_instances.py and
bench/two_instances.py; no Django needed here (the instances have their own).
"""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import requests

from project.testing.harness import alive, descendants, http_status, wait_for

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
CONFIG = ROOT / "deploy" / "supervisord.conf"


def site_prepare(environment: dict[str, str]) -> None:
    """What a deployment runs once before its instances start: migrations and tables."""
    for command in (["migrate", "--no-input"], ["create_tables"], ["activity_tables"]):
        subprocess.run(
            [str(BIN / "python"), "manage.py", *command],
            cwd=ROOT,
            env=environment,
            check=True,
            capture_output=True,
            timeout=300,
        )


@dataclass
class Instance:
    name: str
    port: int
    folder: Path
    process: subprocess.Popen[bytes]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def processes(self) -> list[int]:
        """supervisord and everything under it (gunicorn's master and workers, the workers)."""
        return [self.process.pid, *descendants(self.process.pid)] if alive(self.process.pid) else []

    def output_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join((self.folder / "output.log").read_text(errors="replace").splitlines()[-lines:])
        except FileNotFoundError:
            return ""

    def serves(self) -> bool:
        return http_status(f"{self.url}/healthz") == 200

    def kill(self) -> None:
        """The machine dies: SIGKILL to every process at once, then to any a master forked meanwhile."""
        for _ in range(3):
            pids = self.processes()
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        self.process.wait(timeout=60)
        wait_for(lambda: not any(alive(pid) for pid in self._leftovers()), what=f"{self.name}'s processes gone")

    def _leftovers(self) -> list[int]:
        """Processes of this instance that outlived supervisord (found by their environment's folder)."""
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    environment = (entry / "environ").read_bytes()
                except OSError:
                    continue
                if f"RUN_DIR={self.folder}".encode() in environment:
                    found.append(int(entry.name))
        return found

    def stop(self) -> None:
        """SIGTERM, as an operator stops a machine; whatever is left after the grace is killed."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=90)
            except subprocess.TimeoutExpired:
                pass
        if self.process.poll() is None or any(alive(pid) for pid in self._leftovers()):
            self.kill()


def instance_start(name: str, *, environment: dict[str, str], port: int, folder: Path, **settings: str) -> Instance:
    """Start one instance and wait until it serves; its output goes to `folder`/output.log."""
    folder.mkdir(parents=True, exist_ok=True)
    output = (folder / "output.log").open("ab")
    process = subprocess.Popen(
        [str(BIN / "supervisord"), "-c", str(CONFIG)],
        cwd=ROOT,
        env={
            **environment,
            "RUN_DIR": str(folder),
            "PORT": str(port),
            "PROMETHEUS_MULTIPROC_DIR": str(folder / "metrics"),
            **settings,
        },
        stdout=output,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    instance = Instance(name=name, port=port, folder=folder, process=process)
    try:
        wait_for(lambda: instance.serves() or process.poll() is not None, what=f"{name} serving on {port}")
        if process.poll() is not None:
            raise AssertionError(f"{name} exited with {process.returncode}: {instance.output_tail()}")
    except BaseException:
        instance.stop()
        raise
    return instance


class Balancer:
    """What a load balancer in front of the instances does, for a client's requests: each
    request to the next instance that is up; one refused or dropped (a dead instance: not
    tried again for a few seconds, as a health check would take it out), shed (503), or
    meeting an `Idempotency-Key` still held by a request that died with its instance (409
    `idempotency_in_progress`, taken over after IDEMPOTENCY_LEASE_SECONDS) goes again to
    the other, with the same key. `failed_over` counts those by cause."""

    def __init__(self, instances: list[Instance], *, seconds: float = 180.0) -> None:
        self.instances = instances
        self.seconds = seconds
        self.turn = itertools.count()
        self.failed_over: Counter[str] = Counter()
        self.down_until: dict[str, float] = {}
        self.lock = threading.Lock()

    def request(
        self, method: str, path: str, *, token: str | None = None, key: str | None = None, **kwargs: Any
    ) -> requests.Response:
        headers = dict(kwargs.pop("headers", {}))
        if token:
            headers["Authorization"] = f"Token {token}"
        if key:
            headers["Idempotency-Key"] = key
        with self.lock:
            first = next(self.turn)
        deadline = time.monotonic() + self.seconds
        last: object = None
        for attempt in itertools.count():
            if time.monotonic() > deadline:
                raise AssertionError(f"{method} {path}: no instance answered within {self.seconds:.0f}s ({last})")
            instance = self.instances[(first + attempt) % len(self.instances)]
            if self.down_until.get(instance.name, 0.0) > time.monotonic() and attempt < len(self.instances):
                continue
            try:
                answer = requests.request(method, instance.url + path, headers=headers, timeout=30, **kwargs)
            except requests.ConnectionError as error:
                last = error
                self._failed_over("connection")
                self.down_until[instance.name] = time.monotonic() + 5.0
                time.sleep(0.05)
                continue
            if answer.status_code == 503 or (
                answer.status_code == 409 and answer.json().get("code") == "idempotency_in_progress"
            ):
                last = answer.text
                self._failed_over(str(answer.status_code))
                time.sleep(float(answer.headers.get("Retry-After", "1")))
                continue
            return answer
        raise AssertionError("unreachable")

    def _failed_over(self, cause: str) -> None:
        with self.lock:
            self.failed_over[cause] += 1
