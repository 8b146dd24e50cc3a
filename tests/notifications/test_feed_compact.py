"""Compact feed entries: the text is read from its source when shown, map-format
feeds keep reading, a full feed stays small, and dispatch reads feeds in batches."""

from unittest import mock

import pytest

from actions.comments import comment_create
from delivery import dispatch as delivery_dispatch
from delivery import preparation as delivery_preparation
from notifications.feed import events as feed_events
from notifications.feed import merge as feed_merge
from notifications.feed import selectors as feed_selectors
from notifications.feed import services as feed_services
from notifications.feed.encoding import FeedEntry, Record, digest
from notifications.feed.events import FeedEvent
from notifications.models import Feed, LegacyFeedEntry
from project.dynamo import wire
from project.testing.harness import wait_for
from social import services
from tests.delivery.helpers import assert_exactly_once, create

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


def stored(entries: list[FeedEntry]) -> bytes:
    """The bytes `Feed.records` stores for `entries`."""
    return Feed.records.serialize([Record.of(entry) for entry in entries])


def read_back(data: bytes) -> list[FeedEntry]:
    return [record.entry() for record in Feed.records.deserialize(data)]


def post(user, body="Hello", parent=None):
    return comment_create(author_id=str(user.pk), body=body, parent_id=parent.comment_id if parent else None)


def test_a_reply_hidden_after_it_was_notified_is_shown_as_removed(make_user, api):
    ann, bob = make_user("ann"), make_user("bob")
    comment = post(ann)
    reply = post(bob, "a rude reply", parent=comment)
    [entry] = api.as_user(ann).get("/api/feed/").json()["results"]
    assert (entry["body"], entry["removed"]) == ("a rude reply", False)
    assert entry["url"] == f"/c/{comment.comment_id}/#c-{reply.comment_id}"
    assert entry["rollup_key"] == f"reply#{comment.comment_id}"
    services.comment_set_hidden(comment_id=reply.comment_id, hidden=True)
    # The texts are read eventually consistently: the hide shows within about a second.
    [entry] = wait_for(
        lambda: [e for e in api.as_user(ann).get("/api/feed/").json()["results"] if e["removed"]],
        what="the hidden reply shown as removed",
    )
    assert "rude" not in entry["body"]
    inbox = api.as_user(ann).get("/api/notifications/").json()["results"]
    assert all("rude" not in (item.get("excerpt") or "") + item["text"] for item in inbox)


def test_the_feed_stores_no_text_of_replies_or_deliveries(make_user):
    ann, bob = make_user("ann"), make_user("bob")
    comment = post(ann)
    post(bob, "x" * 1000, parent=comment)
    item = Feed.get(str(ann.pk), consistent_read=True)
    assert b"xxxx" not in item.serialize()["p"]["B"]
    assert item.entries[0].body == "" and item.entries[0].object_id


def test_a_feed_in_the_old_format_reads_the_same_and_is_rewritten_compact_at_its_next_write(make_user, api):
    ann = make_user("ann")
    old_entry = LegacyFeedEntry(
        entry_id=feed_events.feed_entry_id("old-1"),
        kind="message",
        title="Welcome",
        body="Old text kept inline",
        url="/welcome/",
        created_at="2026-11-01T10:00:00.000000Z",
        updated_at="2026-11-01T10:00:00.000000Z",
    )
    # A feed item in the map format: a list of maps and the event ids.
    Feed._get_connection().put_item(
        str(ann.pk),
        attributes={
            "entries": {"L": [{"M": old_entry.serialize(old_entry)}]},
            "event_ids": {"L": [{"S": "old-1"}]},
            "version": {"N": "1"},
        },
    )
    [entry] = api.as_user(ann).get("/api/feed/").json()["results"]
    assert (entry["title"], entry["body"], entry["url"]) == ("Welcome", "Old text kept inline", "/welcome/")
    # Applying the old event again is still recognised; a new one rewrites the item compact.
    assert feed_services.feed_append(user_id=str(ann.pk), event=FeedEvent("old-1", "message", None, None)).status == (
        feed_services.ALREADY_APPLIED
    )
    feed_services.feed_append(user_id=str(ann.pk), event=FeedEvent("new-1", "message", None, None, title="New"))
    item = Feed.get(str(ann.pk), consistent_read=True)
    assert item.legacy_entries is None and item.legacy_event_ids is None
    assert [e.title for e in item.entries] == ["New", "Welcome"]
    assert item.applied == [digest("old-1"), digest("new-1")]


def test_a_full_feed_of_replies_is_a_few_kilobytes():
    entries = []
    for n in range(100):
        event = FeedEvent(
            f"reply:{n}", "reply", str(10_000 + n), f"reply#{n:036d}", object_id="5f0c5a2e-8f4e-4c59-9b0a-3a1d2c4b5e6f"
        )
        entries.append(feed_merge.feed_write_compute(feed=feed_selectors.feed_empty("1"), event=event).feed.entries[0])
    packed = stored(entries)
    assert read_back(packed) == entries
    assert len(packed) < 4_600  # the whole list of 100 entries (about 43 bytes each)


def test_dispatch_reads_a_batch_of_feeds_with_one_batch_get(make_user, settings):
    staff = make_user("boss", is_staff=True)
    users = [make_user() for _ in range(9)]
    targets = [str(staff.pk)] + [str(u.pk) for u in users]
    delivery = create(staff)
    delivery_preparation.delivery_prepare(delivery_id=delivery.delivery_id)
    calls = []
    real = wire.make_api_call

    def spy(self, operation, params):
        tables = params.get("RequestItems", {}).keys() if operation == "BatchGetItem" else [params.get("TableName")]
        calls.extend((operation, table) for table in tables)
        return real(self, operation, params)

    with mock.patch.object(wire, "make_api_call", spy):
        delivery_dispatch.delivery_dispatch(
            delivery_id=delivery.delivery_id, owner="one", batch_size=10, lease_seconds=60
        )
    assert_exactly_once(delivery.delivery_id, targets)
    feed_reads = [operation for operation, table in calls if table == Feed.Meta.table_name]
    assert "GetItem" not in feed_reads
    assert feed_reads.count("BatchGetItem") >= 1


def round_trip_entries() -> list[FeedEntry]:
    return [
        FeedEntry(
            "00ff00ff00ff00ff",
            "reply",
            1_700_000_000_456,  # created_at is kept to the second before updated_at
            1_700_000_123_456,
            rollup=b"abcdef",
            object_id="5f0c5a2e-8f4e-4c59-9b0a-3a1d2c4b5e6f",
            actor_ids=["7", "12345678"],
            actor_count=300,
            event_count=70_000,
            read=True,
        ),
        FeedEntry("0123456789abcdef", "message", 1_700_000_000_000, 1_700_000_000_000, object_id="ab" * 16),
        FeedEntry(
            "fedcba9876543210",
            "custom-kind",
            5_000,
            9_000,
            actor_ids=["alice", "007"],
            actor_count=2,
            title="T",
            body="本文",
            url="/x/",
        ),
        FeedEntry("1111111111111111", "reply", 10, 10, object_id="not-a-uuid"),
    ]


def test_records_round_trip_whatever_they_hold():
    entries = round_trip_entries()
    assert read_back(stored(entries)) == entries


def test_the_stored_bytes_are_the_record_format_byte_for_byte():
    """What `Feed` stores (its `p` and `h` attributes) is the documented record format: items
    written earlier read the same and cost the same."""
    rolled_up = FeedEntry(
        "2222222222222222",
        "replies",
        1_700_000_000_000,
        1_700_000_100_000,
        object_id="5f0c5a2e-8f4e-4c59-9b0a-3a1d2c4b5e6f",
        actor_ids=["9"],
        actor_count=1,
        event_count=3,
        read=True,
        read_ms=1_700_000_160_000,
    )
    feed = Feed("1", records=[Record.of(entry) for entry in [*round_trip_entries(), rolled_up]])
    feed.applied = [digest("old-1"), digest("new-1")]
    item = feed.serialize()
    assert item["p"]["B"].hex() == (
        "314f00ff00ff00ff00ff018bcfe74a406162636465667bac02f0a2045f0c5a2e8f4e4c599b0a3a1d2c4b5e6f0507cec2f10523ac"
        "0123456789abcdef018bcfe56800000001abababababababababababababababab013910fedcba98765432100000000023280b63"
        "7573746f6d2d6b696e640402010405616c696365033030370001540006e69cace6968700032f782f1e4411111111111111110000"
        "0000000a0000010a6e6f742d612d757569640125cd2222222222222222018bcfe6eea06401035f0c5a2e8f4e4c599b0a3a1d2c4b"
        "5e6f03093c"
    )
    assert item["h"]["B"].hex() == "f3bad1139c55703e26a5b673"
    again = Feed.from_raw_data(item)
    assert again.entries == feed.entries and again.applied == feed.applied


def test_a_read_entry_keeps_its_read_time_and_older_read_records_still_decode():
    from notifications.feed.encoding import pack_entry, unpack_entry

    entry = FeedEntry("00ff00ff00ff00ff", "reply", 1_700_000_000_000, 1_700_000_100_000, object_id="ab" * 16)
    entry.mark_read(now_ms=1_700_000_100_000 + 3 * 86_400_000 + 999)
    assert entry.read_ms == 1_700_000_100_000 + 3 * 86_400_000  # to the second
    assert unpack_entry(pack_entry(entry)) == entry
    assert len(pack_entry(entry)) - len(pack_entry(FeedEntry(**{**entry.__dict__, "read_ms": None}))) == 3

    older = pack_entry(FeedEntry(**{**entry.__dict__, "read_ms": None}))  # read before the time was kept
    assert unpack_entry(older).read and unpack_entry(older).read_ms is None


def test_a_full_feed_read_days_later_stays_under_5_kb():
    """The item is rewritten at every event: under 5 KB it costs 5 write units (10 in the transaction)."""
    entries = []
    for n in range(100):
        event = FeedEvent(
            f"reply:{n}", "reply", str(10_000 + n), f"reply#{n:036d}", object_id="5f0c5a2e-8f4e-4c59-9b0a-3a1d2c4b5e6f"
        )
        entry = feed_merge.feed_write_compute(feed=feed_selectors.feed_empty("1"), event=event).feed.entries[0]
        entry.mark_read(now_ms=entry.updated_ms + 20 * 86_400_000)
        entries.append(entry)
    assert len(stored(entries)) + 32 * 6 < 5_000
