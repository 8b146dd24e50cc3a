"""Several dispatchers on one delivery at once: threads, and separate processes running
`manage.py dispatch_deliveries` against the same DynamoDB Local."""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from delivery import dispatch, preparation
from delivery.models import Delivery, DeliveryChunk, chunk_key
from project.dynamo import clients as dynamo
from project.testing.harness import WAIT_SECONDS, in_threads, wait_for
from tests.delivery.helpers import assert_exactly_once, create

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow, pytest.mark.usefixtures("aws_read_lag")]

# No dispatcher dies here: a lease no busy machine outlasts keeps chunks from being taken
# over (and counted twice) because a thread waited its turn.
LEASE_SECONDS = 600

BASE_DIR = Path(__file__).resolve().parents[2]


@pytest.fixture
def audience(make_user, settings):
    settings.DELIVERY_CHUNK_SIZE = 5
    staff = make_user("boss", is_staff=True)
    users = [make_user() for _ in range(59)]
    return staff, [str(staff.pk)] + [str(u.pk) for u in users]


@pytest.mark.parametrize("dispatchers", [2, 4])
def test_dispatcher_threads_deliver_exactly_once(audience, dispatchers):
    staff, targets = audience
    delivery = create(staff)
    preparation.delivery_prepare(delivery_id=delivery.delivery_id)

    def run(number):
        return dispatch.delivery_dispatch(
            delivery_id=delivery.delivery_id, owner=f"t{number}", batch_size=3, lease_seconds=LEASE_SECONDS
        )

    reports = in_threads(run, dispatchers)
    assert sum(report.delivered for report in reports) == len(targets)
    assert sum(report.chunks for report in reports) == 12
    assert_exactly_once(delivery.delivery_id, targets)


def test_dispatchers_racing_to_prepare_and_dispatch(audience):
    """Four threads each prepare and dispatch the same draft delivery at once."""
    staff, targets = audience
    delivery = create(staff)

    def run(number):
        preparation.delivery_prepare(delivery_id=delivery.delivery_id)
        dispatch.delivery_dispatch(
            delivery_id=delivery.delivery_id, owner=f"t{number}", batch_size=3, lease_seconds=LEASE_SECONDS
        )

    in_threads(run, 4)
    assert_exactly_once(delivery.delivery_id, targets)


def _command(dynamodb, *args, hold: Path | None = None):
    """`manage.py dispatch_deliveries` in its own process; with `hold`, one that waits after its
    first batch (tests/delivery/held_dispatcher.py)."""
    env = {
        **os.environ,
        "DYNAMODB_HOST": dynamodb,
        "DYNAMODB_TABLE_PREFIX": dynamo.endpoint().prefix,
        "DATABASE_URL": "sqlite:///:memory:",  # the dispatch path must not need the relational DB
        "LOG_LEVEL": "INFO",
    }
    program = ["-m", "tests.delivery.held_dispatcher", str(hold)] if hold else ["manage.py", "dispatch_deliveries"]
    return subprocess.Popen(
        [sys.executable, *program, "--no-progress", *args],
        cwd=BASE_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("processes", [2, 4])
def test_dispatcher_processes_deliver_exactly_once(audience, dynamodb, processes):
    staff, targets = audience
    delivery = create(staff)
    preparation.delivery_prepare(delivery_id=delivery.delivery_id)
    running = [_command(dynamodb, "--delivery", delivery.delivery_id, "--batch-size", "3") for _ in range(processes)]
    outputs = [process.communicate(timeout=WAIT_SECONDS) for process in running]
    for process, (out, err) in zip(running, outputs, strict=True):
        assert process.returncode == 0, err
        assert f"delivery {delivery.delivery_id}: done, {len(targets)}/{len(targets)} delivered" in out
    assert_exactly_once(delivery.delivery_id, targets)


def test_sigterm_finishes_the_batch_and_a_rerun_completes(audience, dynamodb, tmp_path):
    staff, targets = audience
    delivery = create(staff)
    preparation.delivery_prepare(delivery_id=delivery.delivery_id)
    hold = tmp_path / "dispatcher"
    process = _command(
        dynamodb, "--delivery", delivery.delivery_id, "--batch-size", "1", "--lease-seconds", "600", hold=hold
    )
    # Signalled while held after its first batch: it stops half way however fast the box is.
    wait_for(lambda: hold.with_suffix(".held").exists() or process.poll() is not None, what="the first batch")
    assert process.poll() is None, process.stderr.read()
    process.send_signal(signal.SIGTERM)
    hold.with_suffix(".go").touch()
    _, err = process.communicate(timeout=WAIT_SECONDS)
    assert process.returncode == 0, err
    assert "finishing the current batch" in err
    stopped = Delivery.get(delivery.delivery_id, consistent_read=True)
    assert stopped.status == "dispatching" and stopped.chunks_done == 0
    chunks = DeliveryChunk.batch_get([chunk_key(delivery.delivery_id, seq) for seq in range(12)], consistent_read=True)
    assert sorted(int(chunk.delivered) for chunk in chunks) == [0] * 11 + [1]  # the one batch, no more
    # The chunk it held was released: the re-run takes it at once instead of waiting
    # out the 600-second lease (it would time out below).
    rerun = _command(dynamodb, "--delivery", delivery.delivery_id)
    _, err = rerun.communicate(timeout=WAIT_SECONDS)
    assert rerun.returncode == 0, err
    assert_exactly_once(delivery.delivery_id, targets)
