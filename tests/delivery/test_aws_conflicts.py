"""Several dispatchers on one delivery under AWS's conflict rules (project/testing/aws_conflicts.py).

On AWS, two dispatchers' transactions on one lease, chunk or feed cancel each other and
a plain write to an item a transaction holds is refused; DynamoDB Local never does
either. Under the model: every target served exactly once, nobody else.
"""

import threading
from unittest import mock

import pytest
from botocore.exceptions import ClientError

from delivery import batches, dispatch, leases, preparation
from delivery.models import Delivery, DeliveryTarget
from project.dynamo import wire
from project.errors import Conflict
from project.testing.aws_conflicts import aws_conflict_model
from project.testing.harness import in_threads, wait_for
from tests.delivery.helpers import assert_exactly_once, create

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow, pytest.mark.usefixtures("aws_read_lag")]

# No dispatcher dies here: a lease no busy machine outlasts keeps chunks from being taken
# over (and counted twice) because a thread waited its turn.
LEASE_SECONDS = 600


@pytest.fixture
def audience(make_user, settings):
    settings.DELIVERY_CHUNK_SIZE = 5
    staff = make_user("boss", is_staff=True)
    users = [make_user() for _ in range(39)]
    return staff, [str(staff.pk)] + [str(u.pk) for u in users]


def _is_delivery_batch(actions: list[dict]) -> bool:
    """The actions of a `targets_deliver` transaction: it deletes target items."""
    return any(action.get("Delete", {}).get("TableName") == DeliveryTarget.Meta.table_name for action in actions)


def test_four_dispatchers_under_aws_conflicts_deliver_exactly_once(audience):
    """The first delivery batch stays in flight, holding its items as a slow transaction does on
    AWS, until another dispatcher has met it: the dispatchers conflict on any machine, however
    the threads are scheduled, and still serve every target exactly once."""
    staff, targets = audience
    delivery = create(staff)
    real = wire.make_api_call
    first = threading.Lock()  # taken by the first batch only

    def first_batch_held(self, operation, params):
        if operation == "TransactWriteItems" and _is_delivery_batch(params["TransactItems"]):
            if first.acquire(blocking=False):
                wait_for(lambda: conflicts.cancelled + conflicts.refused_writes, what="a dispatcher meeting the batch")
        return real(self, operation, params)

    def run(number):
        try:
            preparation.delivery_prepare(delivery_id=delivery.delivery_id)
        except Conflict:
            # A late preparer whose chunk's targets the held batch holds meets conflicts for as
            # long as the hold lasts, which a busy machine may stretch past its retries: the
            # worker logs it and prepares again on its next pass (below); nothing is written twice.
            pass
        dispatch.delivery_dispatch(
            delivery_id=delivery.delivery_id, owner=f"t{number}", batch_size=3, lease_seconds=LEASE_SECONDS
        )

    # The model calls the hold while it counts the batch's items in flight.
    with mock.patch.object(wire, "make_api_call", first_batch_held), aws_conflict_model() as conflicts:
        in_threads(run, 4)
        # A dispatcher that gave a chunk up on conflicts leaves it to the next run: one more
        # pass serves whatever is left, and never twice.
        preparation.delivery_prepare(delivery_id=delivery.delivery_id)
        dispatch.delivery_dispatch(
            delivery_id=delivery.delivery_id, owner="after", batch_size=3, lease_seconds=LEASE_SECONDS
        )
    assert first.locked()
    assert conflicts.cancelled + conflicts.refused_writes > 0
    assert_exactly_once(delivery.delivery_id, targets)


def test_a_batch_cancelled_with_a_gone_target_and_a_busy_delivery_item_is_not_a_cancel(audience):
    """On AWS one cancellation can name several reasons: here the delivery's condition check
    met another transaction (TransactionConflict, not a failed condition) while one target
    was already delivered (ConditionalCheckFailed). The delivery is still dispatching, so the
    batch drops the gone target and delivers the others; nothing is served twice."""
    staff, targets = audience
    delivery = create(staff)
    preparation.delivery_prepare(delivery_id=delivery.delivery_id)
    lease = leases.chunk_claim(delivery_id=delivery.delivery_id, owner="a", lease_seconds=60)
    event = batches.delivery_feed_event(delivery)
    first, rest = lease.user_ids[0], lease.user_ids[1:]
    assert batches.targets_deliver(
        delivery_id=delivery.delivery_id, seq=lease.seq, user_ids=[first], event=event
    ).delivered == [first]
    real = wire.make_api_call
    injected = []

    def reason(action: dict) -> str:
        if "ConditionCheck" in action and action["ConditionCheck"]["TableName"] == Delivery.Meta.table_name:
            return "TransactionConflict"
        if "Delete" in action and action["Delete"]["Key"]["user_id"]["S"] == first:
            return "ConditionalCheckFailed"
        return "None"

    def once_mixed(self, operation, params):
        if operation == "TransactWriteItems" and not injected:
            injected.append([reason(action) for action in params["TransactItems"]])
            error = {"Code": "TransactionCanceledException", "Message": "cancelled"}
            raise ClientError({"Error": error, "CancellationReasons": [{"Code": c} for c in injected[0]]}, operation)
        return real(self, operation, params)

    with mock.patch.object(wire, "make_api_call", once_mixed):
        result = batches.targets_deliver(
            delivery_id=delivery.delivery_id, seq=lease.seq, user_ids=lease.user_ids, event=event
        )
    assert injected[0].count("TransactionConflict") == 1 and "ConditionalCheckFailed" in injected[0]
    assert not result.cancelled
    assert result.gone == [first] and sorted(result.delivered) == sorted(rest)
    assert dispatch.chunk_dispatch(lease=lease, event=event, batch_size=3).finished  # nothing left in it
    dispatch.delivery_dispatch(delivery_id=delivery.delivery_id, owner="b", batch_size=3, lease_seconds=60)
    assert_exactly_once(delivery.delivery_id, targets)
