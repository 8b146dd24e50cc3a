"""Applying an event to a feed already read: the pure part of every feed write (docs/explanation/feed.md "The feed").

`feed_write_compute` merges the event into an unread entry with the same roll-up key or
inserts a new entry, and caps the list; it does no I/O. The result, a `FeedWrite`, is the
one version-conditioned put that notifications/feed/services.py (or a producer's own
transaction, as delivery's dispatch) then runs. It works on the packed records
(notifications/feed/encoding.py): what an event points at (the reply, the delivery) is
kept by id and its text read when the feed is shown.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext

from notifications.feed.encoding import (
    KIND_CODES,
    PERSON_ROLLUP_KIND,
    FeedEntry,
    Record,
    actor_bytes,
    digest,
    iso_to_ms,
    pack_entry,
)
from notifications.feed.events import FeedEvent, FeedEventTooLarge, feed_entry_id
from notifications.models import Feed, UnreadCount, unread_count_set
from project.clock import clock
from project.dynamo.transactions import LabelledTransactWrite

FEED_SOURCE = "feed"  # the feed's item in unread_counts
FEED_ACTORS_KEPT = 10  # distinct actor ids kept per entry (see _merge for the count beyond)
FEED_ENTRY_MAX_BYTES = 2800
FEED_ITEM_BUDGET_BYTES = 300_000  # what FEED_MAX_ENTRIES full-size entries may take at most
FEED_MAX_ENTRIES_LIMIT = FEED_ITEM_BUDGET_BYTES // FEED_ENTRY_MAX_BYTES
# Event digests kept (6 bytes each). Only events merged into an existing entry need
# theirs: an event that made an entry is also found by that entry while it is in the feed.
FEED_APPLIED_KEPT = 32


def feed_settings_errors() -> list[str]:
    """What is wrong with the feed's settings (a system check reports it at start-up)."""
    errors = []
    limit = settings.FEED_MAX_ENTRIES
    if not isinstance(limit, int) or not 1 <= limit <= FEED_MAX_ENTRIES_LIMIT:
        errors.append(
            f"FEED_MAX_ENTRIES={limit!r}: must be an integer between 1 and {FEED_MAX_ENTRIES_LIMIT} "
            "so that a full feed stays far below DynamoDB's 400 KB item limit."
        )
    per_person = settings.FEED_REPLIES_PER_PERSON
    if not isinstance(per_person, int) or per_person < 1:
        errors.append(
            f"FEED_REPLIES_PER_PERSON={per_person!r}: must be a positive integer (the unread reply "
            "entries one person may hold in someone's feed before their replies roll up into one)."
        )
    return errors


def feed_max_entries() -> int:
    """FEED_MAX_ENTRIES, checked at start-up by `notifications.checks` (and here, for safety)."""
    errors = feed_settings_errors()
    if errors:
        raise ImproperlyConfigured(errors[0])
    return settings.FEED_MAX_ENTRIES


def feed_replies_per_person() -> int:
    """FEED_REPLIES_PER_PERSON, checked at start-up by `notifications.checks`."""
    errors = feed_settings_errors()
    if errors:
        raise ImproperlyConfigured(errors[-1])
    return settings.FEED_REPLIES_PER_PERSON


def feed_entry_size(entry: FeedEntry) -> int:
    """Bytes the entry takes in the item (its packed record)."""
    return len(pack_entry(entry))


@dataclass
class FeedWrite:
    """The state a feed will have once an event is applied: one version-conditioned put.

    `add_to(transaction, label=...)` adds the put of the feed item (condition: the version
    that was read, or "no item yet") and the `unread_counts` `feed` update to a
    `project.dynamo.transactions` transaction, under the caller's label. A failed condition on
    that label in the outcome means another writer changed the feed: prepare again.
    """

    user_id: str
    already_applied: bool  # the event id is already in the feed: nothing to write
    feed: Feed | None = None
    entry_id: str | None = None
    merged: bool = False  # rolled up into an existing unread entry
    unread_count: int = 0
    read_version: int | None = None  # None: the feed item does not exist yet
    silenced: bool = False  # refused: its actor is blocked or muted by the feed's owner (nothing written)
    # The unread count moved (a new entry, or marked read); a merge into an unread entry
    # leaves it as it is, and then the `unread_counts` item is not rewritten.
    count_changed: bool = True

    @property
    def action_count(self) -> int:
        if self.already_applied:
            return 0
        return 2 if self.count_changed else 1

    def add_to(self, transaction: LabelledTransactWrite, *, label: object = None) -> None:
        """Add the feed put and the unread-count update, both labelled `label`."""
        if self.already_applied:
            return
        # PynamoDB adds the VersionAttribute condition and the increment.
        transaction.save(cast(Feed, self.feed), label=label)  # set unless already applied
        if self.count_changed:
            transaction.update(
                UnreadCount(self.user_id, FEED_SOURCE),
                actions=[unread_count_set(self.unread_count)],
                label=label,
            )


def feed_unread_entries(feed: Feed) -> int:
    """Unread entries, counted from the records' heads."""
    return sum(1 for record in feed.records if not record.read)


def feed_entries_mark_read(feed: Feed, *, entry_ids: set[str] | None, now_ms: int) -> int:
    """Mark the given entries of `feed` (all when `entry_ids` is None) read, in memory; returns
    how many were unread. Only those records are packed again; the others stay as read."""
    marked = 0
    records = list(feed.records)
    for index, record in enumerate(records):
        if not record.read and (entry_ids is None or record.entry_id in entry_ids):
            entry = record.entry()
            entry.mark_read(now_ms=now_ms)
            records[index] = Record.of(entry)
            marked += 1
    feed.records = records
    return marked


MESSAGE_CODE = KIND_CODES["message"]
REPLY_CODE = KIND_CODES["reply"]


def _eviction_rank(entry: FeedEntry | Record) -> int:
    """Which entries the cap drops first: read ones (0), then unread activity of other people
    (1), and unread broadcasts (2) only to make room for newer broadcasts (when unread
    broadcasts alone fill the feed): no amount of replies can push a staff message out."""
    if entry.read:
        return 0
    kind_code = entry.kind_code if isinstance(entry, Record) else KIND_CODES.get(entry.kind, 0)
    return 2 if kind_code == MESSAGE_CODE else 1


def _sort_and_cap(entries: list[FeedEntry] | list[Record], limit: int) -> list:
    """Newest first; beyond `limit`, drop the oldest read entries first, then the oldest
    unread ones that are not broadcasts, then the oldest unread broadcasts.

    Works on entries and on records alike (both have `updated_ms`, `entry_id`, `read`).
    """
    entries.sort(key=lambda entry: (entry.updated_ms, entry.entry_id), reverse=True)
    excess = len(entries) - limit
    if excess <= 0:
        return entries
    ranks = [_eviction_rank(entry) for entry in entries]
    dropped = set()
    for rank in (0, 1, 2):
        for index in range(len(entries) - 1, -1, -1):
            if excess == 0:
                break
            if ranks[index] == rank:
                dropped.add(index)
                excess -= 1
    return [entry for index, entry in enumerate(entries) if index not in dropped]


def _person_rollup(records: list[Record], actor_id: str) -> bytes | None:
    """The roll-up digest a reply from `actor_id` to a comment without an unread entry goes
    under: None (its own entry) while the person has fewer than FEED_REPLIES_PER_PERSON unread
    reply entries of their own here, else their one "replied N more times" entry. So one
    person replying to every comment someone wrote fills at most that many entries plus one.
    Only unread reply records that hold the actor's bytes are decoded, and only their actor ids.
    """
    needle, own = actor_bytes(actor_id), 0
    for record in records:
        if (
            not record.read
            and record.kind_code == REPLY_CODE
            and needle in record.raw
            and record.actor_ids() == [actor_id]
        ):
            own += 1
    return digest(f"{PERSON_ROLLUP_KIND}#{actor_id}") if own >= feed_replies_per_person() else None


def _merge(entry: FeedEntry, event: FeedEvent, created_ms: int) -> None:
    """Roll `event` into the unread `entry` ("Bob and 3 others replied").

    `actor_count` counts distinct people: an actor already in `actor_ids` is not counted
    again. Only the newest FEED_ACTORS_KEPT actors are kept (the item must stay small), so
    an actor who acted before that many others since is counted a second time.
    """
    if event.actor_id is not None:
        actors = list(entry.actor_ids or [])
        if event.actor_id in actors:
            actors.remove(event.actor_id)
        else:
            entry.actor_count = int(entry.actor_count or 0) + 1
        actors.append(event.actor_id)
        entry.actor_ids = actors[-FEED_ACTORS_KEPT:]
    entry.event_count = int(entry.event_count or 1) + 1
    if created_ms >= entry.updated_ms:  # the newest event is the one shown
        entry.updated_ms = created_ms
        entry.object_id = event.source_id
        entry.title, entry.body, entry.url = event.entry_text()


def feed_write_compute(*, feed: Feed, event: FeedEvent) -> FeedWrite:
    """`feed` with `event` applied, as `feed_write_prepare` does, from a feed already read.

    Works on the packed records (`Feed.records`): only the entry the event rolls into is
    decoded; the others are ordered, capped and copied by their heads.
    """
    user_id = feed.user_id
    read_version = feed.version
    applied = list(feed.applied)
    event_digest = digest(event.event_id)
    records = list(feed.records)
    entry_id = feed_entry_id(event.event_id)
    if event_digest in applied or any(record.entry_id == entry_id for record in records):
        return FeedWrite(user_id=user_id, already_applied=True, read_version=read_version)
    if event.actor_id is not None and event.actor_id in (feed.silenced or ()):
        # Blocked or muted by the owner: nothing is written, whatever the event (a reply, a
        # mention, a watched thread's reply). Decided on the feed read under the version
        # condition, so it cannot miss a block that `feed_silence_compute` wrote meanwhile.
        return FeedWrite(user_id=user_id, already_applied=True, read_version=read_version, silenced=True)
    unread_before = sum(1 for record in records if not record.read)
    created_ms = iso_to_ms(event.created_at) if event.created_at else clock.now_ms()
    rollup = digest(event.rollup_key) if event.rollup_key is not None else None
    kind = event.kind

    def unread_with(key: bytes | None) -> int | None:
        if key is None:
            return None
        return next((index for index, record in enumerate(records) if not record.read and record.rollup == key), None)

    position = unread_with(rollup)
    if position is None and event.kind == "reply" and event.actor_id is not None:
        person_rollup = _person_rollup(records, event.actor_id)
        if person_rollup is not None:
            kind, rollup = PERSON_ROLLUP_KIND, person_rollup
            position = unread_with(rollup)
    if position is not None:
        target = records[position].entry()
        _merge(target, event, created_ms)
        records[position] = Record.of(target)
        entry_id, merged = target.entry_id, True
    else:
        merged = False
        title, body, url = event.entry_text()
        target = FeedEntry(
            entry_id=entry_id,
            kind=kind,
            created_ms=created_ms,
            updated_ms=created_ms,
            rollup=rollup,
            object_id=event.source_id,
            actor_ids=[event.actor_id] if event.actor_id is not None else [],
            actor_count=1 if event.actor_id is not None else 0,
            title=title,
            body=body,
            url=url,
        )
        records.append(Record.of(target))
    size = feed_entry_size(target)
    if size > FEED_ENTRY_MAX_BYTES:  # the field bounds make this unreachable; a guard, not a path
        raise FeedEventTooLarge(
            gettext("A feed entry would take %(size)s bytes; at most %(feed_entry_max_bytes)s.")
            % {"size": size, "feed_entry_max_bytes": FEED_ENTRY_MAX_BYTES}
        )
    feed.records = _sort_and_cap(records, feed_max_entries())
    feed.applied = [*applied, event_digest][-FEED_APPLIED_KEPT:]
    return _changed(
        feed, user_id=user_id, read_version=read_version, unread_before=unread_before, entry_id=entry_id, merged=merged
    )


def feed_silence_compute(*, feed: Feed, other_id: str, silenced: bool) -> FeedWrite:
    """`feed` brought in step with its owner's block or mute of `other_id` (or its undoing).

    Silenced: `other_id` joins `feed.silenced` (the merge refuses their events from then on)
    and leaves every unread entry's actors (`actor_count` one less); an unread entry left with
    no actor is dropped. Read entries are history and stay (the pages hide those that only
    name silenced people). Not silenced: `other_id` leaves `feed.silenced`; nothing retracted
    comes back. Idempotent: a feed already in step gives `already_applied` (nothing to write).
    Only unread records holding the person's bytes are decoded.
    """
    user_id, read_version = feed.user_id, feed.version
    known = set(feed.silenced or ())
    if (other_id in known) == silenced and not silenced:
        return FeedWrite(user_id=user_id, already_applied=True, read_version=read_version)
    needle = actor_bytes(other_id)
    records: list[Record] = []
    retracted = 0
    for record in feed.records:
        if silenced and not record.read and needle in record.raw and other_id in record.actor_ids():
            entry = record.entry()
            entry.actor_ids = [actor for actor in entry.actor_ids if actor != other_id]
            entry.actor_count = max(0, int(entry.actor_count or 0) - 1)
            retracted += 1
            if not entry.actor_ids:
                continue  # nobody else did it: the entry goes
            entry.actor_count = max(entry.actor_count, len(entry.actor_ids))
            record = Record.of(entry)
        records.append(record)
    if (other_id in known) == silenced and not retracted:
        return FeedWrite(user_id=user_id, already_applied=True, read_version=read_version)
    unread_before = sum(1 for record in feed.records if not record.read)
    feed.records = records
    feed.silenced = (known | {other_id}) if silenced else (known - {other_id}) or None
    return _changed(feed, user_id=user_id, read_version=read_version, unread_before=unread_before)


def _changed(
    feed: Feed,
    *,
    user_id: str,
    read_version: int | None,
    unread_before: int,
    entry_id: str | None = None,
    merged: bool = False,
) -> FeedWrite:
    """The write of `feed` as changed (its time now), with its unread count and whether that moved."""
    feed.updated_at = clock.now_iso()
    unread_count = sum(1 for record in feed.records if not record.read)
    return FeedWrite(
        user_id=user_id,
        already_applied=False,
        feed=feed,
        entry_id=entry_id,
        merged=merged,
        unread_count=unread_count,
        read_version=read_version,
        count_changed=unread_count != unread_before,
    )
