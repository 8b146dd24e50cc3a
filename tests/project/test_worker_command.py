"""What every polling worker gets from `WorkerCommand` (project/operations/worker_loop.py), with a
worker of its own that drains a list: `--limit`, one rule for progress bars, the summary of a
run, the exit status of one that failed, and a pass that dies half way through."""

from __future__ import annotations

import io
import logging
import threading

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from project.operations.backlog import Backlog
from project.operations.worker_loop import WorkerCommand


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Drain(WorkerCommand):
    """Takes up to --limit items of `waiting` a pass; an item "bad" fails."""

    worker = "drain"
    logger = logging.getLogger("tests.drain")
    limit_help = "items taken per pass"

    def __init__(self, waiting: list[str], **kwargs):
        super().__init__(**kwargs)
        self.waiting = waiting
        self.done: list[str] = []
        self.failed = 0
        self.bars: list[bool] = []  # per pass: whether its bar was shown

    def backlog(self) -> Backlog:
        return Backlog(label="items", count=len(self.waiting))

    def loop_pass(self) -> bool:
        taken, self.waiting = self.waiting[: self.options["limit"]], self.waiting[self.options["limit"] :]
        bar = self.progress(taken, file=Terminal())
        self.bars.append(not bar.disable)
        for item in bar:
            if item == "dies":
                raise RuntimeError("the process dies here")
            if item == "bad":
                self.failed += 1
            else:
                self.done.append(item)
        return bool(self.waiting)

    def run_once(self) -> None:
        while self.loop_pass():
            pass

    def finish(self) -> None:
        self.report(f"drained {len(self.done)}")
        self.exit_failed(self.failed, f"{self.failed} item(s) failed")


def run(command: Drain, *args: str) -> None:
    call_command(command, *args)


def test_limit_is_each_pass_s_and_at_least_one():
    command = Drain(["a", "b", "c"], stdout=io.StringIO())
    run(command, "--limit", "2")
    assert command.done == ["a", "b", "c"] and command.bars == [True, True]
    assert command.stdout.getvalue().strip() == "drained 3"
    with pytest.raises(CommandError, match="--limit must be at least 1"):
        run(Drain(["a"]), "--limit", "0")
    parser = Drain([]).create_parser("manage.py", "drain")
    assert "items taken per pass (default 100)" in parser.format_help()
    assert "--limit" not in WorkerCommand().create_parser("manage.py", "w").format_help()


def test_no_bar_at_verbosity_0_for_nothing_or_in_a_loop():
    quiet = Drain(["a"], stdout=io.StringIO())
    run(quiet, "-v", "0")
    assert quiet.bars == [False]
    empty = Drain([], stdout=io.StringIO())
    run(empty)
    assert empty.bars == [False]
    looping = Drain(["a", "b"], stdout=io.StringIO())
    stop = threading.Event()
    looping.loop_pass = _then_stop(looping.loop_pass, stop)
    looping.run_loop(stop=stop, poll_seconds=0, limit=1)
    assert looping.done == ["a"] and looping.bars == [False]
    assert looping.stdout.getvalue() == ""  # with --loop, no summary on standard output


def test_a_run_that_failed_exits_1_and_a_loop_goes_on():
    failing = Drain(["a", "bad", "c"], stdout=io.StringIO())
    with pytest.raises(CommandError, match="1 item\\(s\\) failed") as refused:
        run(failing)
    assert refused.value.returncode == 1
    assert failing.done == ["a", "c"] and failing.stdout.getvalue().strip() == "drained 2"
    looping = Drain(["bad"], stdout=io.StringIO())
    stop = threading.Event()
    looping.loop_pass = _then_stop(looping.loop_pass, stop)
    looping.run_loop(stop=stop, poll_seconds=0, limit=1)
    looping.finish()  # what `handle` calls after the loop: nothing raised


def test_a_pass_that_dies_half_way_keeps_what_it_did_and_the_run_says_nothing_more():
    command = Drain(["a", "dies", "c"], stdout=io.StringIO())
    with pytest.raises(RuntimeError):
        run(command)
    assert command.done == ["a"] and command.waiting == []
    assert command.stdout.getvalue() == ""  # no summary of a run that died


def _then_stop(loop_pass, stop: threading.Event):
    def once() -> bool:
        try:
            return loop_pass()
        finally:
            stop.set()

    return once
