"""Feed events and the pure logic of applying one to a feed (docs/architecture.md "The feed").

A `FeedEvent` is validated on construction (its bounds keep a full feed far below
DynamoDB's 400 KB item limit). `feed_write_compute` applies an event to a feed already
read: merge into an unread entry with the same roll-up key or insert a new entry, cap
the list; it does no I/O. The result, a `FeedWrite`, is the one version-conditioned put
that `notifications/feed.py` (or a producer's own transaction) then runs.

Entries are small records (notifications/feed_format.py): what an event points at (the
reply, the delivery) is kept by id and its text read when the feed is shown.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from dataclasses import asdict, dataclass
from typing import cast

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from notifications.feed_format import KIND_CODES, FeedEntry, Record, actor_bytes, digest, iso_to_ms, pack_entry
from notifications.models import Feed, UnreadCount, unread_count_set
from project.clock import clock
from project.errors import ApplicationError
from project.transactions import LabelledTransactWrite

FEED_SOURCE = "feed"  # the feed's item in unread_counts

# Bounds that keep one entry small, so a full feed stays far below DynamoDB's 400 KB
# item limit. An event that points at a reply or a delivery stores no text at all (about
# 55 bytes an entry); only events that point at nothing keep title/body/url inline.
FEED_TITLE_MAX_CHARS = 100
FEED_BODY_MAX_CHARS = 400
FEED_URL_MAX_CHARS = 500
FEED_TEXT_MAX_BYTES = 1500  # title + body + url in UTF-8 (about 500 Japanese characters)
FEED_ID_MAX_CHARS = 100  # event_id, rollup_key, delivery_id
FEED_KIND_MAX_CHARS = 32
FEED_ACTOR_ID_MAX_CHARS = 24
FEED_ACTORS_KEPT = 10  # distinct actor ids kept per entry (see _merge for the count beyond)
FEED_ENTRY_MAX_BYTES = 2800
FEED_ITEM_BUDGET_BYTES = 300_000  # what FEED_MAX_ENTRIES full-size entries may take at most
FEED_RETRY_SHARDS = 4  # partitions of the `feed_retry` table (see `feed_retry_key`)
# Event digests kept (6 bytes each). Only events merged into an existing entry need
# theirs: an event that made an entry is also found by that entry while it is in the feed.
FEED_APPLIED_KEPT = 32


class FeedEventTooLarge(ApplicationError):
    """A feed event whose text or ids exceed the bounds above (a 400 on `field`)."""


FEED_MAX_ENTRIES_LIMIT = FEED_ITEM_BUDGET_BYTES // FEED_ENTRY_MAX_BYTES


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


@dataclass(frozen=True)
class FeedEvent:
    """Something that happened for a user. Validated on construction (FeedEventTooLarge)."""

    event_id: str  # unique per event; the merge is idempotent on it
    kind: str  # "reply", "message", ...
    actor_id: str | None  # who caused it (None for staff broadcasts)
    rollup_key: str | None  # events with the same key merge into one unread entry
    title: str = ""
    body: str = ""
    url: str = ""
    delivery_id: str | None = None
    created_at: str | None = None  # ISO; now when None
    object_id: str | None = None  # what the entry shows: a reply's comment id (the text is read from it)

    def __post_init__(self):
        for name in ("event_id", "kind"):
            if not getattr(self, name):
                raise FeedEventTooLarge(f"A feed event needs a {name}.", field=name)
        limits = {
            "event_id": FEED_ID_MAX_CHARS,
            "rollup_key": FEED_ID_MAX_CHARS,
            "delivery_id": FEED_ID_MAX_CHARS,
            "object_id": FEED_ID_MAX_CHARS,
            "kind": FEED_KIND_MAX_CHARS,
            "actor_id": FEED_ACTOR_ID_MAX_CHARS,
            "title": FEED_TITLE_MAX_CHARS,
            "body": FEED_BODY_MAX_CHARS,
            "url": FEED_URL_MAX_CHARS,
        }
        for name, limit in limits.items():
            value = getattr(self, name)
            if value is not None and len(value) > limit:
                raise FeedEventTooLarge(
                    f"At most {limit} characters in a feed entry's {name} (got {len(value)}).", field=name
                )
        text_bytes = sum(len(value.encode()) for value in (self.title, self.body, self.url))
        if text_bytes > FEED_TEXT_MAX_BYTES:
            raise FeedEventTooLarge(
                f"Title, body and url of a feed entry take {text_bytes} bytes in UTF-8; at most "
                f"{FEED_TEXT_MAX_BYTES} (about {FEED_TEXT_MAX_BYTES // 3} Japanese characters).",
                field="body",
            )

    @property
    def source_id(self) -> str | None:
        """The id the entry's text is read from when shown: the reply, or the delivery."""
        return self.object_id or self.delivery_id

    def to_json(self) -> str:
        return json.dumps(asdict(self), ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> FeedEvent:
        return cls(**json.loads(text))

    def entry_text(self) -> tuple[str, str, str]:
        """The title, body and url an entry stores inline: none when it points at a source."""
        return ("", "", "") if self.source_id else (self.title, self.body, self.url)


def feed_entry_id(event_id: str) -> str:
    """The id of the entry an event creates: derived from the event, so a re-run derives the same one."""
    return hashlib.blake2b(event_id.encode(), digest_size=8).hexdigest()


def feed_entry_size(entry: FeedEntry) -> int:
    """Bytes the entry takes in the item (its packed record)."""
    return len(pack_entry(entry))


@dataclass
class FeedWrite:
    """The state a feed will have once an event is applied: one version-conditioned put.

    `add_to(transaction, label=...)` adds the put of the feed item (condition: the version
    that was read, or "no item yet") and the `unread_counts` `feed` update to a
    `project.transactions` transaction, under the caller's label. A failed condition on
    that label in the outcome means another writer changed the feed: prepare again.
    """

    user_id: str
    already_applied: bool  # the event id is already in the feed: nothing to write
    feed: Feed | None = None
    entry_id: str | None = None
    merged: bool = False  # rolled up into an existing unread entry
    unread_count: int = 0
    read_version: int | None = None  # None: the feed item does not exist yet
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
    return sum(1 for entry in feed.entries if not entry.read)


MESSAGE_CODE = KIND_CODES["message"]
REPLY_CODE = KIND_CODES["reply"]
PERSON_ROLLUP_KIND = "replies"


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
        raise FeedEventTooLarge(f"A feed entry would take {size} bytes; at most {FEED_ENTRY_MAX_BYTES}.")
    feed.records = _sort_and_cap(records, feed_max_entries())
    feed.applied = [*applied, event_digest][-FEED_APPLIED_KEPT:]
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


def feed_retry_key(user_id: str, event: FeedEvent) -> tuple[str, str]:
    """The `feed_retry` key of an event for a user: (shard from a hash of the user id, retry id)."""
    return str(zlib.crc32(user_id.encode()) % FEED_RETRY_SHARDS), f"{user_id}#{event.event_id}"
