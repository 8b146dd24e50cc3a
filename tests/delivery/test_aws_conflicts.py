"""Several dispatchers on one delivery under AWS's conflict rules (project/testing/aws_conflicts.py).

On AWS, two dispatchers' transactions on one lease, chunk or feed cancel each other and
a plain write to an item a transaction holds is refused; DynamoDB Local never does
either. Under the model: every target served exactly once, nobody else.
"""

import threading

import pytest

from delivery import dispatch, preparation
from tests.delivery.helpers import assert_exactly_once, create

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]


@pytest.fixture
def audience(make_user, settings):
    settings.DELIVERY_CHUNK_SIZE = 5
    staff = make_user("boss", is_staff=True)
    users = [make_user() for _ in range(39)]
    return staff, [str(staff.pk)] + [str(u.pk) for u in users]


def test_four_dispatchers_under_aws_conflicts_deliver_exactly_once(audience, aws_conflicts):
    staff, targets = audience
    delivery = create(staff)
    errors = []
    start = threading.Barrier(4)

    def run(number):
        try:
            start.wait()
            preparation.delivery_prepare(delivery_id=delivery.delivery_id)
            dispatch.delivery_dispatch(
                delivery_id=delivery.delivery_id, owner=f"t{number}", batch_size=3, lease_seconds=30
            )
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=run, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert not errors
    # A dispatcher that gave a chunk up on conflicts leaves it to the next run: one more
    # pass serves whatever is left, and never twice.
    dispatch.delivery_dispatch(delivery_id=delivery.delivery_id, owner="after", batch_size=3, lease_seconds=30)
    assert_exactly_once(delivery.delivery_id, targets)
    assert aws_conflicts.transactions > 0
