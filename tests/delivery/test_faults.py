"""Crash at every DynamoDB call of prepare and dispatch, then re-run: still exactly once.

The crash is a BaseException raised from botocore's `_make_api_call`, either before
the Nth call reaches DynamoDB or right after it returned (the write happened, the
process never learned): what `kill -9` between two calls leaves behind. No
`except Exception` in the code under test can swallow it, and nothing is cleaned
up on the way out (leases stay held until they expire), as with a real kill.
"""

import threading
import time
from unittest import mock

import pytest

from delivery import dispatch, preparation
from project.clock import ManualClock, clock_override
from project.dynamo import wire
from project.dynamo.schema import registry
from tests.conftest import truncate_tables
from tests.delivery.helpers import assert_exactly_once, create

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


class Crash(BaseException):
    """The process died here."""


class CallCounter:
    def __init__(self, crash_at: int | None = None, after: bool = False):
        self.crash_at = crash_at
        self.after = after
        self.calls = 0
        self.lock = threading.Lock()
        self.real = wire.make_api_call

    def __call__(self, client, operation_name, api_params):
        with self.lock:
            self.calls += 1
            number = self.calls
        if number == self.crash_at and not self.after:
            raise Crash(f"killed before call {number} ({operation_name})")
        answer = self.real(client, operation_name, api_params)
        if number == self.crash_at and self.after:
            raise Crash(f"killed after call {number} ({operation_name})")
        return answer

    def patch(self):
        """Patch botocore with a plain function (a callable object would not bind as a method)."""

        def fake(client, operation_name, api_params):
            return self(client, operation_name, api_params)

        return mock.patch.object(wire, "make_api_call", fake)


TOUCHED = {"deliveries", "delivery_chunks", "delivery_targets", "delivery_queue", "feed", "feed_retry", "unread_counts"}


def clear_delivery_state():
    """Empty only the tables a delivery touches (the whole set per iteration is slow)."""
    every = registry.registered_models
    with mock.patch.object(
        registry, "registered_models", lambda: [m for m in every() if m.Meta.logical_name in TOUCHED]
    ):
        truncate_tables()


def run_once(delivery_id: str, *, owner: str):
    preparation.delivery_prepare(delivery_id=delivery_id)
    return dispatch.delivery_dispatch(delivery_id=delivery_id, owner=owner, batch_size=2, lease_seconds=30)


def rerun_after_leases_expired(delivery_id: str):
    """A new dispatcher, later: leases of the dead one have expired."""
    with clock_override(ManualClock(time.time() + 3600)):
        return run_once(delivery_id, owner="rerun")


@pytest.mark.slow
@pytest.mark.parametrize("after", [False, True], ids=["before-call", "after-call"])
def test_crash_at_every_call_then_rerun_delivers_exactly_once(make_user, settings, after):
    settings.DELIVERY_CHUNK_SIZE = 2
    staff = make_user("boss", is_staff=True)
    users = [make_user() for _ in range(4)]
    target_ids = [staff.pk] + [u.pk for u in users]

    delivery = create(staff)
    counter = CallCounter()
    with counter.patch():
        run_once(delivery.delivery_id, owner="clean")
    assert_exactly_once(delivery.delivery_id, target_ids)
    total_calls = counter.calls
    assert total_calls > 30  # every step of prepare and dispatch below is a distinct call

    crashed = 0
    for crash_at in range(1, total_calls + 1):
        clear_delivery_state()
        delivery = create(staff)
        with CallCounter(crash_at, after=after).patch():
            try:
                run_once(delivery.delivery_id, owner="doomed")
            except Crash:
                crashed += 1
        rerun_after_leases_expired(delivery.delivery_id)
        try:
            assert_exactly_once(delivery.delivery_id, target_ids)
        except AssertionError as error:
            raise AssertionError(f"crash at call {crash_at} ({'after' if after else 'before'}): {error}") from None
    assert crashed == total_calls


@pytest.mark.slow
def test_crash_twice_in_a_row_then_rerun(make_user, settings):
    """Two dispatchers die one after the other at different points; the third finishes."""
    settings.DELIVERY_CHUNK_SIZE = 2
    staff = make_user("boss", is_staff=True)
    users = [make_user() for _ in range(5)]
    target_ids = [staff.pk] + [u.pk for u in users]
    for first, second in [(12, 9), (30, 4), (41, 17)]:
        clear_delivery_state()
        delivery = create(staff)
        for crash_at, owner in ((first, "one"), (second, "two")):
            with (
                CallCounter(crash_at, after=True).patch(),
                clock_override(ManualClock(time.time() + 3600 * (owner == "two"))),
            ):
                try:
                    run_once(delivery.delivery_id, owner=owner)
                except Crash:
                    pass
        with clock_override(ManualClock(time.time() + 7200)):
            run_once(delivery.delivery_id, owner="three")
        assert_exactly_once(delivery.delivery_id, target_ids)
