"""Prepare and dispatch: exactly once, idempotent re-runs, cancel, deleted accounts, empty audiences."""

import pytest
from django.contrib.auth.models import Group
from django.db import transaction as db_transaction

from delivery import models, preparation, selectors, services
from delivery.batches import delivery_feed_event
from delivery.models import Delivery, DeliveryChunk, DeliveryQueueEntry, DeliveryTarget
from project.errors import ApplicationError
from tests.delivery.helpers import (
    assert_exactly_once,
    badge,
    create,
    dispatch,
    message_counts,
    pending_targets,
)

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


@pytest.fixture
def staff(make_user):
    return make_user("boss", is_staff=True)


@pytest.fixture
def small_chunks(settings):
    settings.DELIVERY_CHUNK_SIZE = 3


def test_all_active_users_get_the_message_once(staff, make_user, small_chunks):
    users = [make_user() for _ in range(7)]
    inactive = make_user("gone")
    inactive.is_active = False
    inactive.save()
    delivery = create(staff)
    assert delivery.status == "draft"
    report = dispatch(delivery.delivery_id)
    assert report.status == "done"
    assert_exactly_once(delivery.delivery_id, [staff.pk] + [u.pk for u in users])
    assert message_counts(delivery.delivery_id, [inactive.pk])[str(inactive.pk)] == 0
    assert badge(users[0].pk) == 1
    assert DeliveryQueueEntry.count("active", consistent_read=True) == 0
    chunks = sorted(DeliveryChunk.scan(consistent_read=True), key=lambda c: c.seq)
    assert [len(c.user_ids) for c in chunks] == [3, 3, 2]


def test_second_run_delivers_nothing_more(staff, make_user, small_chunks):
    users = [make_user() for _ in range(4)]
    delivery = create(staff)
    dispatch(delivery.delivery_id)
    again = dispatch(delivery.delivery_id)
    assert again.delivered == 0
    assert_exactly_once(delivery.delivery_id, [staff.pk] + [u.pk for u in users])


def test_group_audience(staff, make_user, small_chunks):
    doctors = Group.objects.create(name="doctors")
    members = [make_user() for _ in range(4)]
    others = [make_user() for _ in range(3)]
    for member in members:
        member.groups.add(doctors)
    delivery = create(staff, kind="group", group="doctors")
    dispatch(delivery.delivery_id)
    assert_exactly_once(delivery.delivery_id, [m.pk for m in members])
    assert sum(message_counts(delivery.delivery_id, [o.pk for o in others]).values()) == 0


def test_unknown_group_is_refused(staff):
    with pytest.raises(ApplicationError) as error:
        create(staff, kind="group", group="nobody-here")
    assert error.value.field == "audience"


def test_usernames_audience_reports_unknown_names(staff, make_user, small_chunks):
    users = [make_user() for _ in range(4)]
    names = (users[0].username, "ghost", users[1].username, " ", users[1].username, "phantom")
    with pytest.raises(services.UnknownUsernames) as error:
        services.delivery_create(
            title="t",
            body="b",
            url=None,
            audience=services.Audience(kind="usernames", usernames=names),
            created_by=staff,
        )
    assert error.value.unknown == ["ghost", "phantom"]
    assert Delivery.count(consistent_read=True) == 0
    delivery = services.delivery_create(
        title="t",
        body="b",
        url=None,
        audience=services.Audience(kind="usernames", usernames=names, ignore_unknown=True),
        created_by=staff,
    )
    assert delivery.unknown_usernames == ["ghost", "phantom"]
    dispatch(delivery.delivery_id)
    assert_exactly_once(delivery.delivery_id, [users[0].pk, users[1].pk])
    assert sum(message_counts(delivery.delivery_id, [users[2].pk, users[3].pk, staff.pk]).values()) == 0


def test_new_users_after_prepare_began_are_not_swept_in(staff, make_user, small_chunks):
    users = [make_user() for _ in range(4)]
    delivery = create(staff)
    real = preparation._audience_ids_after
    late = []

    def sign_up_meanwhile(delivery, *, after, limit):
        if not late:
            late.append(make_user("latecomer"))
        return real(delivery, after=after, limit=limit)

    preparation._audience_ids_after = sign_up_meanwhile
    try:
        dispatch(delivery.delivery_id)
    finally:
        preparation._audience_ids_after = real
    assert_exactly_once(delivery.delivery_id, [staff.pk] + [u.pk for u in users])
    assert message_counts(delivery.delivery_id, [late[0].pk])[str(late[0].pk)] == 0


def test_empty_audience_finishes_with_nothing_sent(staff, make_user):
    Group.objects.create(name="empty")
    make_user()
    delivery = create(staff, kind="group", group="empty")
    report = dispatch(delivery.delivery_id)
    assert report.status == "done"
    stored = Delivery.get(delivery.delivery_id, consistent_read=True)
    assert (stored.total_targets, stored.delivered_count, stored.chunk_count) == (0, 0, 0)
    assert DeliveryQueueEntry.count("active", consistent_read=True) == 0


def test_cancel_in_the_middle_delivers_nothing_more(staff, make_user, small_chunks):
    users = [make_user() for _ in range(8)]
    delivery = create(staff)
    preparation.delivery_prepare(delivery_id=delivery.delivery_id)
    delivered = []

    def cancel_after_first_batch(count):
        delivered.append(count)
        if len(delivered) == 1:
            services.delivery_cancel(delivery_id=delivery.delivery_id)

    report = dispatch(delivery.delivery_id, batch_size=2, on_delivered=cancel_after_first_batch)
    assert report.status == "cancelled"
    holders = {uid for uid, n in message_counts(delivery.delivery_id, [staff.pk] + [u.pk for u in users]).items() if n}
    assert len(holders) == 2  # the first batch, and nothing after the cancel
    assert dispatch(delivery.delivery_id).delivered == 0
    progress = selectors.delivery_progress(delivery=selectors.delivery_get(delivery_id=delivery.delivery_id))
    assert progress.delivered == 2
    assert progress.pending == 9 - 2
    assert DeliveryQueueEntry.count("active", consistent_read=True) == 0
    assert services.delivery_cancel(delivery_id=delivery.delivery_id).status == "cancelled"  # twice: same answer


def test_done_delivery_cannot_be_cancelled(staff, make_user):
    make_user()
    delivery = create(staff)
    dispatch(delivery.delivery_id)
    with pytest.raises(ApplicationError):
        services.delivery_cancel(delivery_id=delivery.delivery_id)


def test_target_who_deleted_their_account_is_skipped(staff, make_user, small_chunks):
    users = [make_user() for _ in range(5)]
    ids = [staff.pk] + [u.pk for u in users]
    delivery = create(staff)
    preparation.delivery_prepare(delivery_id=delivery.delivery_id)
    leaver = users[2]
    leaver_id = str(leaver.pk)
    leaver.delete()
    assert leaver_id not in pending_targets(delivery.delivery_id)
    dispatch(delivery.delivery_id)
    assert_exactly_once(delivery.delivery_id, ids, skipped=[leaver_id])


def test_an_account_deletion_rolled_back_drops_no_target(staff, make_user, small_chunks):
    users = [make_user() for _ in range(3)]
    ids = [staff.pk] + [u.pk for u in users]
    delivery = create(staff)
    preparation.delivery_prepare(delivery_id=delivery.delivery_id)
    stayer_id = str(users[1].pk)

    class Abandon(Exception):
        pass

    with pytest.raises(Abandon), db_transaction.atomic():
        users[1].delete()
        raise Abandon  # the deletion is rolled back: the account still exists
    assert stayer_id in pending_targets(delivery.delivery_id)
    dispatch(delivery.delivery_id)
    assert_exactly_once(delivery.delivery_id, ids)


def test_prepare_twice_gives_the_same_chunks_and_targets(staff, make_user, small_chunks):
    for _ in range(5):
        make_user()
    delivery = create(staff)
    preparation.delivery_prepare(delivery_id=delivery.delivery_id)
    before = sorted((c.chunk_key, tuple(c.user_ids)) for c in DeliveryChunk.scan(consistent_read=True))
    targets = pending_targets(delivery.delivery_id)
    Delivery(delivery.delivery_id).update(
        actions=[
            Delivery.status.set("preparing"),
            Delivery.frozen_chunks.set(0),
            Delivery.total_targets.set(0),
            Delivery.prepare_after.set(0),
        ]
    )
    preparation.delivery_prepare(delivery_id=delivery.delivery_id)
    assert sorted((c.chunk_key, tuple(c.user_ids)) for c in DeliveryChunk.scan(consistent_read=True)) == before
    assert pending_targets(delivery.delivery_id) == targets
    assert Delivery.get(delivery.delivery_id, consistent_read=True).total_targets == 6


def test_stalled_preparer_cannot_resurrect_a_delivered_target(staff, make_user, small_chunks):
    """A preparer that stalls before writing a chunk's targets wakes up after the delivery went out."""
    users = [make_user() for _ in range(2)]
    delivery = create(staff)
    preparation.delivery_prepare(delivery_id=delivery.delivery_id)
    chunk = DeliveryChunk.get(models.chunk_key(delivery.delivery_id, 0), consistent_read=True)
    dispatch(delivery.delivery_id)
    chunk.targets_written = False  # the stale preparer's view of the chunk
    preparation._chunk_targets_write(chunk)
    assert pending_targets(delivery.delivery_id) == []
    assert dispatch(delivery.delivery_id).delivered == 0
    assert_exactly_once(delivery.delivery_id, [staff.pk] + [u.pk for u in users])


def test_feed_already_holding_the_event_only_loses_the_target(staff, make_user):
    from notifications.feed.services import feed_append

    user = make_user()
    delivery = create(staff, kind="usernames", users=[user])
    preparation.delivery_prepare(delivery_id=delivery.delivery_id)
    feed_append(user_id=str(user.pk), event=delivery_feed_event(delivery))
    dispatch(delivery.delivery_id)
    assert_exactly_once(delivery.delivery_id, [user.pk])
    assert DeliveryTarget.count(str(user.pk), consistent_read=True) == 0
