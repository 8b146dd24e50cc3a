"""`manage.py dispatch_deliveries` in-process: prepares drafts, skips finished ones, validates options."""

import pytest
from django.core.management import CommandError, call_command

from delivery import services
from delivery.models import Delivery
from tests.delivery.helpers import assert_exactly_once, create

pytestmark = pytest.mark.django_db(transaction=True)


def test_prepares_and_sends_every_active_delivery(make_user, settings, capsys):
    settings.DELIVERY_CHUNK_SIZE = 2
    staff = make_user("boss", is_staff=True)
    users = [make_user() for _ in range(4)]
    first, second = create(staff), create(staff, kind="usernames", users=users[:2])
    cancelled = create(staff)
    services.delivery_cancel(delivery_id=cancelled.delivery_id)
    call_command("dispatch_deliveries", "--workers", "2", "--batch-size", "1", "--no-progress")
    out = capsys.readouterr().out
    assert f"delivery {first.delivery_id}: done, 5/5 delivered" in out
    assert f"delivery {second.delivery_id}: done, 2/2 delivered" in out
    assert_exactly_once(first.delivery_id, [staff.pk] + [u.pk for u in users])
    assert_exactly_once(second.delivery_id, [u.pk for u in users[:2]])
    assert Delivery.get(cancelled.delivery_id).total_targets == 0  # never prepared
    call_command("dispatch_deliveries", "--no-progress")  # nothing left to do
    assert capsys.readouterr().out == ""


@pytest.mark.parametrize(
    "args", [["--workers", "0"], ["--batch-size", "0"], ["--batch-size", "33"], ["--lease-seconds", "0"]]
)
def test_bad_options_are_refused(args):
    with pytest.raises(CommandError):
        call_command("dispatch_deliveries", *args)


def test_unknown_delivery_is_an_error():
    with pytest.raises(CommandError, match="no delivery"):
        call_command("dispatch_deliveries", "--delivery", "0123456789abcdef0123456789abcdef", "--no-progress")
