"""`make run` as it runs: scripts/run.sh starts supervisord (deploy/supervisord.conf) with
gunicorn, every worker and the session clean-up, against the suite's DynamoDB Local (its
own table prefix) and a PostgreSQL database of its own. Each kind of process is killed with
SIGKILL in turn: a gunicorn worker, the gunicorn master, every background program, supervisord
itself. Each time the site answers again, every program runs again (once: no orphan or
duplicate left), and a like made around the kill is folded into its author's notifications
(nothing lost). SIGTERM of run.sh then stops every process.

The tests share one running stack and run in this file's order. Deadlines are generous (a
busy 2-core machine): the goal is recovery within 30 s, and a wait fails only at 60 s; the
times measured are printed (`pytest -s`), never asserted.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from project.dynamo.local import free_port
from project.operations.health_selectors import WORKERS
from project.testing.harness import (
    WAIT_SECONDS,
    alive,
    children,
    cmdline,
    descendants,
    http_status,
    served_environment,
    wait_for,
)
from project.testing.postgres import postgres_database_drop, postgres_database_url

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
PROGRAMS = ["web", *WORKERS, "clear_sessions"]
BACKGROUND = PROGRAMS[1:]
RECOVERY_SECONDS = 60.0  # the goal is 30 s; twice that on a busy machine is still a pass, more a failure

pytestmark = pytest.mark.slow


# --- processes, from /proc -------------------------------------------------------------


def environment(pid: int) -> dict[str, str]:
    try:
        raw = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return {}
    return dict(item.split("=", 1) for item in raw.decode(errors="replace").split("\0") if "=" in item)


def session(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[3])
    except (OSError, IndexError, ValueError):
        return None


def all_pids() -> list[int]:
    return [int(entry.name) for entry in Path("/proc").iterdir() if entry.name.isdigit()]


@dataclass
class Stack:
    runner: subprocess.Popen[str]
    port: int
    prefix: str  # this stack's DynamoDB table prefix: its processes carry it in their environment
    env: dict[str, str]
    lines: list[str] = field(default_factory=list)
    tokens: dict[str, str] = field(default_factory=dict)
    liked: list[str] = field(default_factory=list)  # the author's comments liked so far

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def supervisord(self) -> int | None:
        found = [pid for pid in children(self.runner.pid) if "supervisord" in cmdline(pid)]
        return found[0] if found else None

    def programs(self) -> dict[str, list[int]]:
        """Every live process of this stack that supervisord started (or its program did: gunicorn's
        workers), by program, wherever it is now (an orphan too)."""
        found: dict[str, list[int]] = {}
        for pid in all_pids():
            variables = environment(pid)
            name = variables.get("SUPERVISOR_PROCESS_NAME")
            if name and variables.get("DYNAMODB_TABLE_PREFIX") == self.prefix and alive(pid):
                found.setdefault(name, []).append(pid)
        return found

    def main_pids(self) -> dict[str, int]:
        """Each program's own process: a child of the running supervisord."""
        manager = self.supervisord()
        if manager is None:
            return {}
        return {environment(pid).get("SUPERVISOR_PROCESS_NAME", "?"): pid for pid in children(manager) if alive(pid)}

    def count(self, text: str) -> int:
        return sum(text in line for line in list(self.lines))

    def api(self, method: str, path: str, *, user: str | None = None, body: dict | None = None) -> dict:
        request = urllib.request.Request(
            self.url(path),
            method=method,
            data=json.dumps(body).encode() if body is not None else None,
            headers={
                "Content-Type": "application/json",
                **({"Authorization": f"Token {self.tokens[user]}"} if user else {}),
            },
        )
        with urllib.request.urlopen(request, timeout=30) as answer:
            return json.loads(answer.read() or b"{}")

    def like_a_new_comment(self) -> str:
        """The author posts a comment and the liker likes it; the like is stored once answered."""
        comment = self.api("POST", "/api/comments/", user="author", body={"body": f"kill test {len(self.liked)}"})
        answer = self.api("PUT", f"/api/comments/{comment['id']}/like/", user="liker")
        assert answer["like_count"] == 1 and answer["liked"]
        self.liked.append(comment["id"])
        return comment["id"]

    def every_like_folded(self) -> bool:
        """The author's badge counts one notification per liked comment, and each count is 1."""
        try:
            live = self.api("GET", f"/api/live/?comments={','.join(self.liked)}", user="author")
        except (urllib.error.URLError, OSError):
            return False
        return live["unread_count"] == len(self.liked) and all(live["like_counts"].get(c) == 1 for c in self.liked)

    def serving(self) -> bool:
        return http_status(self.url("/readyz")) == 200

    def every_program_running_once(self) -> bool:
        """One process per program under the running supervisord, and no other process of this
        stack anywhere (gunicorn: its master and WEB_CONCURRENCY workers)."""
        main = self.main_pids()
        everything = self.programs()
        return (
            sorted(main) == sorted(PROGRAMS)
            and all(everything.get(name) == [pid] for name, pid in main.items() if name != "web")
            and len(everything.get("web", [])) == 2
            and set(everything) == set(PROGRAMS)
        )

    def output(self) -> str:
        return "".join(self.lines[-80:])


def run_sh_environment(dynamodb: str, database_url: str, prefix: str, folder: Path, port: int) -> dict[str, str]:
    return served_environment(
        dynamodb_host=dynamodb,
        table_prefix=prefix,
        database_url=database_url,
        BIN=str(BIN),
        HOST="127.0.0.1",
        PORT=str(port),
        RUN_DIR=str(folder),  # the control socket: a short path (at most 107 bytes)
        WEB_CONCURRENCY="1",
        WEB_THREADS="4",
        STATIC_ROOT=str(folder / "static"),
        PROMETHEUS_MULTIPROC_DIR=str(folder / "prometheus"),
        RATE_LIMITS_ENABLED="False",
        # Only the folder folds likes: a like made while it is down waits for its successor.
        LIKE_FOLD_AFTER_RESPONSE="False",
        LOG_LEVEL="INFO",
        LOG_FORMAT="text",
    )


@pytest.fixture(scope="module")
def stack(dynamodb):
    folder = Path(tempfile.mkdtemp(prefix="pm-", dir="/tmp"))
    database_url = postgres_database_url(f"pm_{uuid.uuid4().hex[:12]}")
    prefix = f"pm{uuid.uuid4().hex[:6]}_"
    port = free_port()
    env = run_sh_environment(dynamodb, database_url, prefix, folder, port)
    runner = subprocess.Popen(
        ["bash", "scripts/run.sh"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    running = Stack(runner=runner, port=port, prefix=prefix, env=env)
    reader = threading.Thread(target=lambda: running.lines.extend(iter(runner.stdout.readline, "")), daemon=True)
    reader.start()
    try:
        try:
            wait_for(lambda: runner.poll() is not None or running.serving(), what="the site ready")
            assert runner.poll() is None, f"scripts/run.sh exited with {runner.returncode}"
            wait_for(running.every_program_running_once, what="every program running")
        except AssertionError as error:
            raise AssertionError(f"{error}\n--- the stack's last lines:\n{running.output()}") from None
        for user in ("author", "liker"):
            username = f"{user}{uuid.uuid4().hex[:8]}"
            running.api("POST", "/api/users/", body={"username": username, "password": "a-long-passw0rd"})
            token = running.api("POST", "/api/auth/token/", body={"username": username, "password": "a-long-passw0rd"})
            running.tokens[user] = token["token"]
        yield running
    finally:
        leftovers = [pid for pids in running.programs().values() for pid in pids]
        if runner.poll() is None:
            leftovers += descendants(runner.pid)
            os.killpg(runner.pid, signal.SIGKILL)
            runner.wait()
        for pid in leftovers:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        reader.join(10)
        postgres_database_drop(database_url)
        shutil.rmtree(folder, ignore_errors=True)


def recovered(stack: Stack, what: str, condition, started: float) -> float:
    """Wait (up to RECOVERY_SECONDS) for `condition`; print and return the seconds since `started`."""
    try:
        wait_for(condition, what=what, seconds=RECOVERY_SECONDS, every=0.2)
    except AssertionError as error:
        raise AssertionError(f"{error}\n--- the stack's last lines:\n{stack.output()}") from None
    seconds = time.monotonic() - started
    print(f"\n{what}: {seconds:.1f} s after the kill")
    return seconds


def test_make_run_serves_and_runs_every_program_with_its_name_on_its_lines(stack):
    try:
        for name in BACKGROUND:
            wait_for(lambda name=name: stack.count(f"{name}: started"), what=f"{name} in its loop")
            assert any(line.startswith(f"{name} ") and f"{name}: started" in line for line in stack.lines), name
        assert any(line.startswith("web ") and "Listening at" in line for line in stack.lines)
    except AssertionError as error:
        raise AssertionError(f"{error}\n--- the stack's last lines:\n{stack.output()}") from None
    assert http_status(stack.url("/")) == 200
    assert http_status(stack.url("/static/project/site.css")) == 200  # WhiteNoise, collectstatic ran

    def status() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(BIN / "supervisorctl"), "-c", "deploy/supervisord.conf", "status"],
            cwd=ROOT,
            env=stack.env,
            capture_output=True,
            text=True,
        )

    # STARTING until a program has stayed up `startsecs` (10 s), however soon it serves.
    shown = wait_for(
        lambda: (
            (answer := status()).returncode == 0
            and all(" RUNNING " in line for line in answer.stdout.splitlines())
            and answer
        ),
        what="every program RUNNING in supervisorctl status",
    )
    assert sorted(line.split()[0] for line in shown.stdout.splitlines()) == sorted(f"site:{p}" for p in PROGRAMS)
    stack.like_a_new_comment()
    wait_for(stack.every_like_folded, what="the first like folded")


def test_a_killed_gunicorn_worker_is_replaced(stack):
    master = stack.main_pids()["web"]
    [worker] = children(master)
    started = time.monotonic()
    os.kill(worker, signal.SIGKILL)
    recovered(
        stack,
        "a gunicorn worker replaced, the site answering",
        lambda: not alive(worker) and children(stack.main_pids()["web"]) and stack.serving(),
        started,
    )
    assert stack.main_pids()["web"] == master  # the master replaced it, supervisord had nothing to do
    stack.like_a_new_comment()
    wait_for(stack.every_like_folded, what="the like folded", seconds=RECOVERY_SECONDS)


def test_a_killed_gunicorn_master_is_started_again_and_binds_the_port_again(stack):
    stack.like_a_new_comment()  # before the kill: stored, folded whenever the folder gets to it
    master = stack.main_pids()["web"]
    workers = children(master)
    started = time.monotonic()
    os.kill(master, signal.SIGKILL)

    def new_master_serving():
        # The old workers leave by themselves once their parent is gone; after that only the
        # new master's workers can answer.
        current = stack.main_pids().get("web")
        return (
            current not in (None, master)
            and not any(alive(pid) for pid in workers)
            and children(current)
            and stack.serving()
        )

    recovered(stack, "the gunicorn master started again, the site answering", new_master_serving, started)
    wait_for(stack.every_program_running_once, what="one process per program", seconds=RECOVERY_SECONDS)
    wait_for(stack.every_like_folded, what="the like folded", seconds=RECOVERY_SECONDS)


def test_every_killed_background_program_is_started_again_and_nothing_is_lost(stack):
    before = stack.main_pids()
    runs = {name: stack.count(f"{name}: started") for name in BACKGROUND}
    started = time.monotonic()
    for name in BACKGROUND:
        os.kill(before[name], signal.SIGKILL)
    stack.like_a_new_comment()  # while the folder is dead or starting: only its successor folds it

    def all_back_in_their_loops():
        now = stack.main_pids()
        return all(now.get(name) not in (None, before[name]) for name in BACKGROUND) and all(
            stack.count(f"{name}: started") > runs[name] for name in BACKGROUND
        )

    recovered(stack, "every background program started again and in its loop", all_back_in_their_loops, started)
    recovered(stack, "the like made while the folder was down folded", stack.every_like_folded, started)
    assert stack.every_program_running_once()


def test_a_killed_supervisord_is_started_again_and_leaves_no_orphan(stack):
    stack.like_a_new_comment()
    manager = stack.supervisord()
    assert manager is not None
    old = stack.main_pids()
    started = time.monotonic()
    os.kill(manager, signal.SIGKILL)

    def restarted_and_serving():
        current = stack.supervisord()
        return (
            current not in (None, manager)
            and not [pid for pid in all_pids() if session(pid) == manager and alive(pid)]  # the orphans stopped
            and stack.every_program_running_once()
            and not set(stack.main_pids().values()) & set(old.values())
            and stack.serving()
        )

    recovered(
        stack, "supervisord started again, every program once, the site answering", restarted_and_serving, started
    )
    assert any("Stopping what supervisord left running" in line for line in stack.lines)
    recovered(stack, "the like made before the kill folded", stack.every_like_folded, started)


def test_sigterm_stops_every_process(stack):
    everything = descendants(stack.runner.pid) + [pid for pids in stack.programs().values() for pid in pids]
    assert len(everything) >= len(PROGRAMS) + 2  # supervisord, the programs, gunicorn's worker
    stack.runner.send_signal(signal.SIGTERM)
    assert stack.runner.wait(timeout=WAIT_SECONDS) == 128 + signal.SIGTERM
    wait_for(lambda: not [pid for pid in everything if alive(pid)], what="every process gone")
    assert stack.programs() == {}
    try:
        # Each stopped by itself on supervisord's SIGTERM: a worker after its unit of work.
        for name in PROGRAMS:
            assert any(f"stopped: {name} (exit status 0)" in line for line in stack.lines), name
        for name in BACKGROUND:
            assert stack.count(f"{name}: stopped") >= 1, name
    except AssertionError as error:
        raise AssertionError(f"{error}\n--- the stack's last lines:\n{stack.output()}") from None
