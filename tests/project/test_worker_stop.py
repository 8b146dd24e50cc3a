"""The polling workers stop promptly on SIGTERM, as a process manager asks (each promises
5 s; supervisord and the systemd units kill 10 s later).

Each runs as `manage.py <name> --loop` in a process of its own, the way deploy/supervisord.conf
runs it; the test signals it and checks it exits 0 with its "stopped" line. Deadlines are
generous (a busy CI machine): what fails here is a worker that waits out its work instead
of stopping, which takes far longer than any deadline below.
"""

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from project.models import WorkerHeartbeat
from project.testing.harness import wait_for
from social import counters
from social.activity import month_tables
from social.counters import VIEWS, counter_key
from social.models import CounterTotal

ROOT = Path(__file__).resolve().parents[2]
WORKERS = ["fold_like_events", "aggregate_counters", "process_feed_retries", "dispatch_deliveries", "rollup_activity"]

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def worker_env(worker_environment):
    # The workers share the test's PostgreSQL database (migrated, its rows committed: the
    # tests are transactional), as workers share a deployment's.
    return worker_environment()


def start(env, name, *args, tmp_path):
    log = tmp_path / f"{name}.log"
    process = subprocess.Popen(
        [sys.executable, "manage.py", name, "--loop", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),
    )
    return process, log


def stop_and_check(process, log: Path, name: str) -> str:
    process.send_signal(signal.SIGTERM)
    try:
        status = process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise AssertionError(f"{name} still running 60 s after SIGTERM:\n{log.read_text()[-3000:]}") from None
    output = log.read_text()
    assert status == 0, output[-3000:]
    assert f"{name}: stopped" in output, output[-3000:]
    return output


def test_every_looping_worker_stops_cleanly_on_sigterm(worker_env, tmp_path):
    running = {name: start(worker_env, name, tmp_path=tmp_path) for name in WORKERS}
    try:
        for name, (process, log) in running.items():
            wait_for(
                lambda name=name, process=process, log=log: (
                    f"{name}: started" in log.read_text() or process.poll() is not None
                ),
                what=f"{name} started",
            )
            assert process.poll() is None, log.read_text()
        for name, (process, log) in running.items():
            stop_and_check(process, log, name)
        assert list(WorkerHeartbeat.scan()) == []  # each removed its heartbeat on the way out
    finally:
        for process, _ in running.values():
            if process.poll() is None:
                process.kill()
                process.wait()
        for month in month_tables.activity_table_months():  # the rollup worker keeps this month's ready
            month_tables.activity_table_drop(month=month)
        month_tables.activity_tables_forget()


def test_a_busy_aggregator_stops_on_sigterm_instead_of_waiting_for_flags_to_settle(worker_env, tmp_path, settings):
    """Views rely on a counter's due flag, so the aggregator reads the shards only once the flag
    settled (1.75 x COUNTER_AGGREGATION_DELAY after its last change). With a long delay that is
    minutes: SIGTERM must stop the wait, not sit it out. The claimed counters are left to be
    taken again once their claim expires, summed in full then."""
    settings.COUNTER_AGGREGATION_DELAY = 0.1  # the flags come due at once...
    counters.counters_forget_caches()
    keys = [counter_key(kind=VIEWS, object_id=f"busy-{n}") for n in range(3)]
    for key in keys:
        counters.counter_increment(key=key)
    env = {**worker_env, "COUNTER_AGGREGATION_DELAY": "600"}  # ...and settle only in 17.5 minutes
    process, log = start(env, "aggregate_counters", "--poll-seconds", "0.1", tmp_path=tmp_path)
    try:

        def claimed():
            items = [CounterTotal.get(key, consistent_read=True) for key in keys]
            return all(item.claim is not None for item in items)

        wait_for(lambda: claimed() or process.poll() is not None, what="the aggregator claiming the counters")
        assert process.poll() is None, log.read_text()
        output = stop_and_check(process, log, "aggregate_counters")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert "finishing the current counter" in output
    for key in keys:  # nothing summed half way: each claim waits to expire and be taken again
        item = CounterTotal.get(key, consistent_read=True)
        assert item.claim is not None and item.total is None
    assert list(WorkerHeartbeat.query("aggregate_counters")) == []
    counters.counters_forget_caches()


def test_a_worker_signalled_again_and_again_on_its_way_out_still_exits_cleanly(worker_env, tmp_path):
    """A worker may get several signals (Ctrl-C pressed again, a terminal's SIGINT and a process
    manager's SIGTERM). Signals until it exits: none may kill it (status 0)."""
    process, log = start(worker_env, "fold_like_events", tmp_path=tmp_path)
    try:
        wait_for(lambda: "fold_like_events: started" in log.read_text() or process.poll() is not None, what="start")
        deadline = time.monotonic() + 60
        while process.poll() is None and time.monotonic() < deadline:
            process.send_signal(signal.SIGINT if int(time.monotonic() * 1000) % 2 else signal.SIGTERM)
            time.sleep(0.0002)
        status = process.wait(timeout=10)
        output = log.read_text()
        assert status == 0, output[-3000:]
        assert "fold_like_events: stopped" in output, output[-3000:]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
