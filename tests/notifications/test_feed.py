"""The feed write: merge, roll-up, cap, idempotence, version locking, the transaction contract."""

import pytest
from django.test import override_settings

from notifications.feed import events as feed_events
from notifications.feed import merge as feed_merge
from notifications.feed import services as feed_services
from notifications.feed.events import FeedEvent, FeedEventTooLarge
from notifications.models import Feed, UnreadCount
from project.dynamo.clients import connection
from project.dynamo.transactions import LabelledTransactWrite

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


def reply(n, *, actor="2", parent="p1", at=None):
    return FeedEvent(
        event_id=f"reply-{n}",
        kind="reply",
        actor_id=actor,
        rollup_key=f"reply#{parent}",
        body=f"reply number {n}",
        created_at=at or f"2026-01-01T00:00:{n:02d}.000000Z",
    )


def message(n, *, at=None):
    return FeedEvent(
        event_id=f"message-{n}",
        kind="message",
        actor_id=None,
        rollup_key=None,
        title=f"Message {n}",
        body="hello",
        created_at=at or f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}.000000Z",
    )


def titles(user_id="1"):
    return [entry.title for entry in Feed.get(user_id, consistent_read=True).entries]


def stored(user_id="1"):
    return Feed.get(user_id, consistent_read=True)


def badge(user_id="1"):
    try:
        return int(UnreadCount.get(user_id, "feed", consistent_read=True).count)
    except UnreadCount.DoesNotExist:
        return None


def test_first_event_creates_the_feed():
    result = feed_services.feed_append(user_id="1", event=message(1))
    assert result.status == feed_services.APPLIED
    assert result.version == 1
    item = stored()
    assert item.version == 1
    assert [entry.title for entry in item.entries] == ["Message 1"]
    assert item.entries[0].entry_id == result.entry_id == feed_events.feed_entry_id("message-1")
    assert item.entries[0].read is False
    assert badge() == 1


def test_same_event_twice_is_applied_once():
    feed_services.feed_append(user_id="1", event=message(1))
    again = feed_services.feed_append(user_id="1", event=message(1))
    assert again.status == feed_services.ALREADY_APPLIED
    item = stored()
    assert len(item.entries) == 1
    assert item.version == 1
    assert badge() == 1


def test_entries_newest_first():
    for n in (1, 3, 2):
        feed_services.feed_append(user_id="1", event=message(n))
    assert [entry.title for entry in stored().entries] == ["Message 3", "Message 2", "Message 1"]


def test_replies_roll_up_while_unread_and_count_distinct_people():
    feed_services.feed_append(user_id="1", event=reply(1, actor="2"))
    feed_services.feed_append(user_id="1", event=reply(2, actor="3"))
    result = feed_services.feed_append(user_id="1", event=reply(3, actor="2"))
    assert result.merged
    [entry] = stored().entries
    assert entry.actor_count == 2
    assert entry.event_count == 3
    assert entry.actor_ids == ["3", "2"]  # the latest actor last
    assert entry.body == "reply number 3"
    assert badge() == 1
    # Another comment's replies are another entry.
    feed_services.feed_append(user_id="1", event=reply(4, actor="2", parent="p2"))
    assert len(stored().entries) == 2
    assert badge() == 2


def test_reply_after_read_starts_a_new_entry():
    first = feed_services.feed_append(user_id="1", event=reply(1, actor="2"))
    assert feed_services.feed_mark_read(user_id="1", entry_ids=[first.entry_id]) == 1
    assert badge() == 0
    second = feed_services.feed_append(user_id="1", event=reply(2, actor="3"))
    assert not second.merged
    entries = stored().entries
    assert [(entry.entry_id, entry.read, entry.actor_count) for entry in entries] == [
        (second.entry_id, False, 1),
        (first.entry_id, True, 1),
    ]
    assert badge() == 1


@override_settings(FEED_MAX_ENTRIES=5)
def test_cap_drops_the_oldest_read_entry_first():
    for n in range(1, 6):
        feed_services.feed_append(user_id="1", event=message(n))
    # Read the two newest; the oldest unread must survive the cap.
    ids = {entry.title: entry.entry_id for entry in stored().entries}
    feed_services.feed_mark_read(user_id="1", entry_ids=[ids["Message 4"], ids["Message 3"]])
    feed_services.feed_append(user_id="1", event=message(6))
    assert titles() == ["Message 6", "Message 5", "Message 4", "Message 2", "Message 1"]
    feed_services.feed_append(user_id="1", event=message(7))
    assert titles() == ["Message 7", "Message 6", "Message 5", "Message 2", "Message 1"]
    # No read entries left: now the oldest unread goes.
    feed_services.feed_append(user_id="1", event=message(8))
    assert titles() == ["Message 8", "Message 7", "Message 6", "Message 5", "Message 2"]
    assert badge() == 5


def test_cap_at_the_default_hundred():
    for n in range(1, 101):
        feed_services.feed_append(user_id="1", event=message(n))
    first = stored().entries[-1].entry_id
    read = stored().entries[10]
    assert read.title == "Message 90"
    feed_services.feed_mark_read(user_id="1", entry_ids=[read.entry_id])
    feed_services.feed_append(user_id="1", event=message(101))
    entries = stored().entries
    assert len(entries) == 100
    assert "Message 90" not in [entry.title for entry in entries]  # the read one went
    assert entries[-1].entry_id == first  # the oldest unread stayed
    assert badge() == 100


def test_full_feed_of_largest_entries_fits_in_one_item():
    """Text at its byte limit, ids at their length limits, the most actors an entry keeps."""
    for n in range(100):
        event = FeedEvent(
            event_id=f"{n:03d}" + "e" * 97,
            kind="message",
            actor_id=None,
            rollup_key=None,
            title="い" * feed_events.FEED_TITLE_MAX_CHARS,
            body="あ" * feed_events.FEED_BODY_MAX_CHARS,
            delivery_id="d" * 100,
        )
        assert sum(len(text.encode()) for text in (event.title, event.body)) == feed_events.FEED_TEXT_MAX_BYTES
        assert feed_services.feed_append(user_id="1", event=event).status == feed_services.APPLIED
    item = stored()
    assert len(item.entries) == 100
    widest = item.entries[0]
    widest.actor_ids = [f"{n:024d}" for n in range(feed_merge.FEED_ACTORS_KEPT)]
    widest.rollup_key = "r" * feed_events.FEED_ID_MAX_CHARS
    widest.url = ""
    assert feed_merge.feed_entry_size(widest) <= feed_merge.FEED_ENTRY_MAX_BYTES
    assert feed_merge.feed_entry_size(widest) * 100 < 300_000


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"title": "x" * (feed_events.FEED_TITLE_MAX_CHARS + 1)}, "title"),
        ({"body": "x" * (feed_events.FEED_BODY_MAX_CHARS + 1)}, "body"),
        ({"body": "あ" * 400, "title": "い" * 100, "url": "/x"}, "body"),  # within chars, beyond bytes
        ({"url": "/" * (feed_events.FEED_URL_MAX_CHARS + 1)}, "url"),
        ({"event_id": ""}, "event_id"),
    ],
)
def test_oversized_events_are_rejected_with_the_field(fields, field):
    arguments = {"event_id": "e1", "kind": "message", "actor_id": None, "rollup_key": None} | fields
    with pytest.raises(FeedEventTooLarge) as error:
        FeedEvent(**arguments)
    assert error.value.field == field


def test_event_json_round_trip():
    event = reply(1)
    assert FeedEvent.from_json(event.to_json()) == event


def test_prepare_writes_nothing_and_add_to_joins_another_transaction():
    """The contract delivery uses: prepare, then the feed write inside its own transaction."""
    write = feed_services.feed_write_prepare(user_id="1", event=message(1))
    assert not write.already_applied
    assert write.action_count == 2
    with pytest.raises(Feed.DoesNotExist):
        stored()
    with LabelledTransactWrite(connection=connection()) as transaction:
        write.add_to(transaction, label="feed")
    assert stored().version == 1
    assert badge() == 1
    again = feed_services.feed_write_prepare(user_id="1", event=message(1))
    assert again.already_applied
    assert again.action_count == 0


def test_stale_prepared_write_is_cancelled_not_lost():
    """Two writers prepared on the same version: the second write is refused; re-preparing merges both."""
    from project.dynamo.transactions import transact

    first = feed_services.feed_write_prepare(user_id="1", event=message(1))
    second = feed_services.feed_write_prepare(user_id="1", event=message(2))
    assert transact(first.add_to, what="test").ok
    outcome = transact(second.add_to, what="test")
    assert outcome.failed[0] == outcome.actions[0]  # the feed put is the first action
    assert [entry.title for entry in stored().entries] == ["Message 1"]
    assert transact(feed_services.feed_write_prepare(user_id="1", event=message(2)).add_to, what="test").ok
    item = stored()
    assert [entry.title for entry in item.entries] == ["Message 2", "Message 1"]
    assert item.version == 2
    assert badge() == 2


def test_mark_all_read():
    for n in range(1, 4):
        feed_services.feed_append(user_id="1", event=message(n))
    assert feed_services.feed_mark_read(user_id="1") == 3
    assert all(entry.read for entry in stored().entries)
    assert badge() == 0
    version = stored().version
    assert feed_services.feed_mark_read(user_id="1") == 0  # nothing to do: nothing written
    assert stored().version == version


@pytest.mark.parametrize("value", [0, 108, "100"])
def test_a_bad_feed_cap_is_reported_at_start_up_by_a_system_check(settings, value):
    from django.core import checks

    settings.FEED_MAX_ENTRIES = value
    errors = [error for error in checks.run_checks() if error.id == "notifications.E001"]
    assert len(errors) == 1 and "FEED_MAX_ENTRIES" in errors[0].msg
    settings.FEED_MAX_ENTRIES = 100
    assert not [error for error in checks.run_checks() if error.id == "notifications.E001"]


def test_mark_read_racing_an_append_redoes_the_marking_on_the_newer_feed(monkeypatch):
    """A message lands between mark-read's read and its write: the version condition refuses
    the stale put, the marking is computed again on the newer feed, the newcomer stays unread."""
    first = feed_services.feed_append(user_id="1", event=message(1)).entry_id
    real_read, reads = feed_services.feed_read, []

    def read_then_someone_appends(*, user_id):
        current = real_read(user_id=user_id)
        reads.append(current.version)
        if len(reads) == 1:
            feed_services.feed_append(user_id=user_id, event=message(2))
        return current

    monkeypatch.setattr(feed_services, "feed_read", read_then_someone_appends)
    assert feed_services.feed_mark_read(user_id="1", entry_ids=[first]) == 1
    # Mark-read's read, the append's own read, then mark-read's re-read after its put was refused.
    assert reads == [1, 1, 2]
    entries = {entry.title: entry.read for entry in stored().entries}
    assert entries == {"Message 1": True, "Message 2": False}
    assert badge() == 1
