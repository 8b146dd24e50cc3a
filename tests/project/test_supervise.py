"""project.supervise: a worker that dies is started again, with back-off; a signal stops it."""

import os
import signal
import subprocess
import sys
from pathlib import Path

from project.supervise import Backoff
from project.testing.harness import alive, wait_for

ROOT = Path(__file__).resolve().parents[2]
# A stand-in worker: ready for SIGTERM, writes its pid, then runs until SIGTERM, which it obeys cleanly.
CHILD = """
import os, signal, sys, time
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
open(sys.argv[1], "a").write(f"{os.getpid()}\\n")  # after the handler: a SIGTERM from now on is obeyed
while True:
    time.sleep(0.1)
"""


def supervise(*arguments: str) -> subprocess.Popen:
    """`python -m project.supervise` with a short back-off, its stderr kept for the asserts."""
    return subprocess.Popen(
        [sys.executable, "-m", "project.supervise", "--min-backoff", "0.1", *arguments],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )


def first_pid(pids_file: Path) -> int:
    """The pid the stand-in wrote at its first start."""
    wait_for(lambda: pids_file.exists() and pids_file.read_text().split(), what="a start")
    return int(pids_file.read_text().split()[0])


def test_backoff_doubles_on_quick_deaths_up_to_the_maximum_and_resets_after_a_healthy_run():
    backoff = Backoff(minimum=1, maximum=8, healthy_after=60)
    assert [backoff.after_run(0.5) for _ in range(5)] == [1, 2, 4, 8, 8]
    assert backoff.after_run(61) == 1
    assert backoff.after_run(2) == 2


def test_a_killed_worker_is_restarted_and_sigterm_stops_both(tmp_path):
    pids_file = tmp_path / "pids"
    command = [sys.executable, "-c", CHILD, str(pids_file)]
    supervisor = supervise("--name", "stand-in", "--", *command)
    try:
        first = first_pid(pids_file)
        os.kill(first, signal.SIGKILL)
        pids = wait_for(
            lambda: len(pids_file.read_text().split()) >= 2 and pids_file.read_text().split(), what="a restart"
        )
        second = int(pids[1])
        assert second != first and alive(second)

        supervisor.send_signal(signal.SIGTERM)
        assert supervisor.wait(timeout=60) == 0  # the worker obeyed SIGTERM and exited 0
        assert not alive(second)
        assert len(pids_file.read_text().split()) == 2  # stopped, not restarted
        log = supervisor.stderr.read()
        assert f"supervise[stand-in]: pid {first} exited with status -9" in log
        assert "restarting in 0s" in log
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.wait()


def test_the_exit_status_is_the_last_commands_even_when_an_earlier_one_was_killed(tmp_path):
    """A command killed, started again, then stopped by SIGTERM while it starts up: the
    status is the new command's (SIGTERM), not the killed one's."""
    pids_file = tmp_path / "pids"
    command = [
        sys.executable,
        "-c",
        "import os, sys, time; open(sys.argv[1], 'a').write(f'{os.getpid()}\\n'); time.sleep(600)",
    ]
    supervisor = supervise("--", *command, str(pids_file))
    try:
        first = first_pid(pids_file)
        os.kill(first, signal.SIGKILL)
        wait_for(lambda: len(pids_file.read_text().split()) >= 2, what="a second start")
        supervisor.send_signal(signal.SIGTERM)
        assert supervisor.wait(timeout=60) == 128 + signal.SIGTERM  # the sleeping command died of SIGTERM
        assert "stopped (status -15)" in supervisor.stderr.read()
    finally:
        if supervisor.poll() is None:
            supervisor.kill()
            supervisor.wait()
