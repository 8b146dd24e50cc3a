"""Shared checks for the delivery tests: who holds which message, and the counts."""

from __future__ import annotations

from collections import Counter

from delivery import preparation, services
from delivery.dispatch import delivery_dispatch
from delivery.models import Delivery, DeliveryChunk, DeliveryTarget
from notifications.models import Feed, UnreadCount


def audience(users) -> services.Audience:
    return services.Audience(kind="usernames", usernames=tuple(user.username for user in users))


def create(staff, *, kind="all", users=(), group=None, title="Clinic closed Friday", **kwargs) -> Delivery:
    if kind == "usernames":
        aud = audience(users)
    else:
        aud = services.Audience(kind=kind, group=group)
    return services.delivery_create(
        title=title, body="The clinic is closed on Friday.", url=None, audience=aud, created_by=staff, **kwargs
    )


def dispatch(delivery_id: str, *, batch_size=4, lease_seconds=30.0, owner="test", **kwargs):
    preparation.delivery_prepare(delivery_id=delivery_id)
    return delivery_dispatch(
        delivery_id=delivery_id, owner=owner, batch_size=batch_size, lease_seconds=lease_seconds, **kwargs
    )


def message_counts(delivery_id: str, user_ids) -> Counter[str]:
    """How many feed entries of this delivery each user holds (consistent reads)."""
    counts: Counter[str] = Counter()
    for user_id in user_ids:
        try:
            feed = Feed.get(str(user_id), consistent_read=True)
        except Feed.DoesNotExist:
            continue
        counts[str(user_id)] = sum(1 for entry in feed.entries if entry.delivery_id == delivery_id)
    return counts


def all_feed_holders(delivery_id: str) -> Counter[str]:
    """Every user holding an entry of this delivery, found by scanning the feed table (tests only)."""
    counts: Counter[str] = Counter()
    for feed in Feed.scan(consistent_read=True):
        count = sum(1 for entry in feed.entries if entry.delivery_id == delivery_id)
        if count:
            counts[feed.user_id] = count
    return counts


def badge(user_id) -> int:
    try:
        return int(UnreadCount.get(str(user_id), "feed", consistent_read=True).count)
    except UnreadCount.DoesNotExist:
        return 0


def pending_targets(delivery_id: str) -> list[str]:
    return sorted(t.user_id for t in DeliveryTarget.scan(consistent_read=True) if t.delivery_id == delivery_id)


def assert_exactly_once(delivery_id: str, target_ids, *, skipped=()):
    """Every target holds exactly one message, nobody else holds one, the counts match."""
    expected = {str(uid) for uid in target_ids} - {str(uid) for uid in skipped}
    holders = all_feed_holders(delivery_id)
    assert set(holders) == expected, f"missing {expected - set(holders)}, extra {set(holders) - expected}"
    assert all(count == 1 for count in holders.values()), {u: c for u, c in holders.items() if c != 1}
    delivery = Delivery.get(delivery_id, consistent_read=True)
    assert delivery.status == "done"
    assert int(delivery.total_targets) == len(set(map(str, target_ids)))
    assert int(delivery.delivered_count) == len(expected)
    assert int(delivery.skipped_count) == len(set(map(str, skipped)))
    chunks = [c for c in DeliveryChunk.scan(consistent_read=True) if c.delivery_id == delivery_id]
    assert len(chunks) == int(delivery.chunk_count) == int(delivery.chunks_done)
    assert all(c.status == "done" for c in chunks)
    assert sum(int(c.delivered) for c in chunks) == len(expected)
    frozen = [uid for c in chunks for uid in c.user_ids]
    assert sorted(frozen) == sorted(set(map(str, target_ids)))  # no duplicates, no gaps
    assert pending_targets(delivery_id) == []
    assert not delivery.in_flight
