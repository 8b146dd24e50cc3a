"""Keep one command running: restart it when it dies, with back-off; stop it on a signal.

    python -m project.supervise [--name NAME] -- python manage.py fold_like_events --loop

The Procfile wraps each background worker in this, because honcho (like foreman) does
not restart a process that exits: it stops all the others instead. Here:

- the command exits or is killed (a crash, `kill -9`, an out-of-memory kill): it is
  started again after a delay that doubles with each quick death (`--min-backoff` 1 s
  up to `--max-backoff` 30 s) and goes back to the minimum once a run has lasted
  `--healthy-after` seconds (60), so a crash loop does not spin and a rare crash is
  repaired within a second;
- SIGTERM or SIGINT: passed on to the command, once (the workers then finish their unit
  of work and exit; a Ctrl-C reaches the command and this at once, and more signals
  after the first change nothing), no restart; after `--grace` seconds (4) it is killed, and says so:
  honcho sends SIGKILL 5 s after SIGTERM, without a word about which process was
  still running. The exit status is the command's.

No Django here: the supervisor is a few MB, and it survives whatever the command does.
Under systemd or a container platform, their own restart policy does this job instead
(docs/operations.md "Production checklist").
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from project.signal_safe import set_soon

if TYPE_CHECKING:
    from types import FrameType


class Backoff:
    """The delay before the next start, from how long the last run lasted."""

    def __init__(self, *, minimum: float, maximum: float, healthy_after: float):
        self.minimum = minimum
        self.maximum = maximum
        self.healthy_after = healthy_after
        self.current = minimum

    def after_run(self, ran_seconds: float) -> float:
        if ran_seconds >= self.healthy_after:
            self.current = self.minimum
        delay = self.current
        self.current = min(self.maximum, self.current * 2)
        return delay


def say(name: str, message: str) -> None:
    print(f"supervise[{name}]: {message}", file=sys.stderr, flush=True)


def supervise(
    command: list[str],
    *,
    name: str,
    backoff: Backoff,
    grace: float,
    stop: threading.Event | None = None,
) -> int:
    """Run `command` until `stop` is set (by SIGTERM/SIGINT); returns its last exit status."""
    stop = stop or threading.Event()
    child: subprocess.Popen[bytes] | None = None
    received: list[int] = []  # the signal that stops us: the first one; later ones change nothing
    signalled: list[int | None] = [None]  # the pid it was passed on to

    def on_signal(signum: int, frame: FrameType | None) -> None:
        if received:
            return
        received.append(signum)
        if child is not None and child.returncode is None:
            try:
                os.kill(child.pid, signum)
                signalled[0] = child.pid
            except ProcessLookupError:
                pass
        set_soon(stop)  # not stop.set() here: project/signal_safe.py says why

    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, on_signal)

    def stopping() -> bool:  # a signal came (its handler sets `stop` a moment later), or a caller's stop
        return bool(received) or stop.is_set()

    status = 0
    while not stopping():
        started = time.monotonic()
        child = subprocess.Popen(command)
        say(name, f"started {' '.join(command)} (pid {child.pid})")
        while child.poll() is None and not stopping():
            stop.wait(0.2)
        if stopping():
            break
        status = child.returncode
        ran = time.monotonic() - started
        delay = backoff.after_run(ran)
        say(name, f"pid {child.pid} exited with status {status} after {ran:.1f}s; restarting in {delay:.0f}s")
        stop.wait(delay)
    if child is not None:
        # A signal that arrived before this child existed was not passed on. Never twice: a
        # second SIGTERM reaching a Python command while it exits, its handlers gone, kills it.
        if child.poll() is None and signalled[0] != child.pid:
            try:
                os.kill(child.pid, received[0] if received else signal.SIGTERM)
            except ProcessLookupError:
                pass
        try:
            status = child.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            say(name, f"pid {child.pid} still running {grace:.0f}s after the signal; killing it")
            child.kill()
            status = child.wait()
        say(name, f"stopped (status {status})")
    return status


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--name", help="how the lines name the command (default: its management command)")
    parser.add_argument("--min-backoff", type=float, default=1.0, metavar="S")
    parser.add_argument("--max-backoff", type=float, default=30.0, metavar="S")
    parser.add_argument("--healthy-after", type=float, default=60.0, metavar="S")
    parser.add_argument(
        "--grace", type=float, default=4.0, metavar="S", help="seconds between SIGTERM and SIGKILL (default 4)"
    )
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- the command and its arguments")
    options = parser.parse_args(argv)
    command = options.command[1:] if options.command[:1] == ["--"] else options.command
    if not command:
        parser.error("give the command to supervise after --")
    name = options.name or next(
        (part for part in command if not (Path(part).name.startswith("python") or part.endswith(".py"))), command[0]
    )
    backoff = Backoff(minimum=options.min_backoff, maximum=options.max_backoff, healthy_after=options.healthy_after)
    status = supervise(command, name=name, backoff=backoff, grace=options.grace)
    return 128 - status if status < 0 else status  # killed by signal N: 128 + N, as a shell says


if __name__ == "__main__":
    sys.exit(main())
