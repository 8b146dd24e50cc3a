"""The Procfile under honcho, as `make run` starts it: gunicorn serves, a worker killed
with -9 is started again by its supervisor, SIGTERM stops every process."""

import os
import signal
import subprocess
import sys
import threading
import uuid
from pathlib import Path

import pytest

from project.dynamo_local import free_port
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

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
WORKERS = ["fold_like_events", "aggregate_counters", "process_feed_retries", "dispatch_deliveries", "rollup_activity"]

pytestmark = pytest.mark.slow


SUPERVISED_FOLDER = "python -m project.supervise -- python manage.py fold_like_events"


@pytest.fixture
def stack_env(dynamodb, tmp_path):
    env = served_environment(
        dynamodb_host=dynamodb,
        table_prefix=f"pm{uuid.uuid4().hex[:6]}_",
        database_url=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        WEB_CONCURRENCY="1",
        WEB_THREADS="2",
        STATIC_ROOT=str(tmp_path / "static"),
    )
    for command in (["migrate", "--no-input"], ["create_tables"], ["collectstatic", "--no-input"]):
        subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env, check=True, capture_output=True)
    return env


def test_honcho_serves_restarts_a_killed_worker_and_stops_everything_on_sigterm(stack_env):
    port = free_port()
    manager = subprocess.Popen(
        [str(BIN / "honcho"), "-e", "/dev/null", "--no-colour", "start", "-p", str(port)],
        cwd=ROOT,
        env=stack_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(iter(manager.stdout.readline, "")), daemon=True)
    reader.start()
    everything: list[int] = []
    try:
        wait_for(lambda: http_status(f"http://127.0.0.1:{port}/readyz") == 200, what="gunicorn ready")
        assert http_status(f"http://127.0.0.1:{port}/") == 200
        assert http_status(f"http://127.0.0.1:{port}/static/project/site.css") == 200  # WhiteNoise

        def started(name):
            return [line for line in lines if f"supervise[{name}]: started" in line]

        for name in WORKERS:
            wait_for(lambda name=name: started(name), what=f"{name} started")
            assert any(line.startswith(f"{name}.1") or f" {name}.1 " in line for line in lines)
        folder = next(pid for pid in descendants(manager.pid) if cmdline(pid).startswith(SUPERVISED_FOLDER))
        worker = wait_for(lambda: children(folder), what="the folder's worker process")[0]
        os.kill(worker, signal.SIGKILL)
        wait_for(
            lambda: any(f"pid {worker} exited with status -9 after" in line for line in lines),
            what="the supervisor noticing",
        )
        wait_for(lambda: len(started("fold_like_events")) == 2, what="the folder started again")
        restarted = wait_for(lambda: [pid for pid in children(folder) if pid != worker], what="a new worker")[0]
        assert alive(restarted)
        for name in WORKERS:  # each in its loop (a worker signalled while Django starts up dies of it)
            runs = 2 if name == "fold_like_events" else 1
            wait_for(
                lambda name=name, runs=runs: sum(f"{name}: started" in line for line in lines) >= runs,
                what=f"{name} in its loop",
            )
        assert not any("system" in line and "stopped" in line for line in lines)  # nothing else went down

        everything = descendants(manager.pid)
        manager.send_signal(signal.SIGTERM)
        manager.wait(timeout=WAIT_SECONDS)
        wait_for(lambda: not [pid for pid in everything if alive(pid)], what="every process gone")
        reader.join(WAIT_SECONDS)  # honcho's output read to its end: nothing is left to write to it
        assert any("SIGTERM received" in line for line in lines)
        # Each worker was told to stop and stopped by itself, within honcho's fixed 5 s grace:
        # it finished its unit of work and exited 0, and its supervisor with it.
        for name in WORKERS:
            assert any(f"sending SIGTERM to {name}.1" in line for line in lines), name
            assert any(f"{name}: stopped" in line for line in lines), name
            assert any(f"supervise[{name}]: stopped (status 0)" in line for line in lines), name
    except AssertionError as error:
        raise AssertionError(f"{error}\n--- honcho's last lines:\n{''.join(lines[-60:])}") from None
    finally:
        if manager.poll() is None:
            # honcho starts each process in a group of its own: a failed run kills them one by one.
            leftovers = descendants(manager.pid)
            os.killpg(manager.pid, signal.SIGKILL)
            for pid in leftovers:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            manager.wait()
        for pid in everything:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
