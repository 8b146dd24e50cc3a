"""How a feed's entries are stored: one compact binary record per entry (a fixed head, then
varints and short strings), because a write is billed by the whole item's size.

A feed item is rewritten whole on every event, and DynamoDB bills a write by the item's
size (one unit per KB, two in a transaction). So an entry keeps only what ordering,
capping, roll-up and counting need: its id, kind, a digest of its roll-up key, the id
of what it points at (the newest reply, or the delivery), actor ids and counts, times
and the read flag. About 40 to 50 bytes (38 for one person's reply, 49 for three rolled up);
a full feed of 100 entries is about 4.5 KB. The text
shown (a reply's excerpt, a delivery's title) is read when the feed is shown, from
where it lives (notifications/feed/selectors.py), so a hidden reply is shown as such.

Record layout, records joined in one binary attribute, each preceded by its length
(v). The head is fixed so that the write path reads what it orders, caps and rolls up
by without decoding the rest (`Record`), and copies untouched records as they are:

    flags       1   READ | ROLLUP | OBJECT | OBJECT_UUID | TEXT | HEX_UUID, and the kind's
                    code from KIND_CODES in the top two bits (0: a short string follows)
    entry_id    8   the 16 hex digits of `feed_entry_id`
    updated_at  6   epoch milliseconds, big-endian
    rollup      6   digest of the roll-up key                  (ROLLUP)
    kind        s   only when its code is 0
    created_at  v   seconds before updated_at (so created_at is kept to the second)
    actor_count v   distinct actors
    event_count v   events merged
    object      16  a UUID (comment or delivery id), or a short string   (OBJECT)
    actors      v   2 x the number of actor ids kept, + 1 when they are all plain numbers
                    (Django pks), then each as v, or else each as a short string
    text        title, body, url as long strings, for events that point at nothing (TEXT)
    read_after  v   seconds from updated_at to when it was read (READ; a record may end
                    before it: read, at a time not known)

`v` is an unsigned LEB128 varint (1 byte below 128); a short string is 1 byte of
length then UTF-8, a long one 2 bytes of length.

`FeedRecordsAttribute` and `EventDigestsAttribute` are the PynamoDB attributes that store
a feed's records and applied-event digests in this format (`Feed.records`, `Feed.applied`).

A feed item in the map format (a list of maps under `entries`, event ids under
`event_ids`) is read through `legacy_feed_upgrade` and stored packed at its next write.
"""

from __future__ import annotations

import hashlib
import struct
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pynamodb.attributes import Attribute
from pynamodb.constants import BINARY

from project.clock import parse_iso

if TYPE_CHECKING:
    from notifications.models import Feed

DIGEST_BYTES = 6
# One person's replies across several comments, rolled into one entry once they have
# FEED_REPLIES_PER_PERSON unread reply entries (notifications/feed/merge.py).
PERSON_ROLLUP_KIND = "replies"
KIND_CODES = {"reply": 1, "message": 2, PERSON_ROLLUP_KIND: 3}
KIND_NAMES = {code: name for name, code in KIND_CODES.items()}
KIND_SHIFT = 6

READ, ROLLUP, OBJECT, OBJECT_UUID, TEXT = 1, 2, 4, 8, 16
HEX_UUID = 32  # an OBJECT_UUID whose text is 32 hex digits (delivery ids), not the dashed form
_HEAD = struct.Struct(">B8s6s")


def digest(text: str) -> bytes:
    """A 6-byte digest: roll-up keys and applied event ids are compared by it."""
    return hashlib.blake2b(text.encode(), digest_size=DIGEST_BYTES).digest()


def iso_to_ms(value: str) -> int:
    return round(parse_iso(value).timestamp() * 1000)


@dataclass
class FeedEntry:
    """One entry of a feed, as the write path merges, orders and caps it."""

    entry_id: str  # 16 hex digits
    kind: str
    created_ms: int
    updated_ms: int  # the newest event merged in; entries are ordered by it
    rollup: bytes | None = None  # digest of the roll-up key
    object_id: str | None = None  # the newest reply's comment id, or the delivery id
    actor_ids: list[str] = field(default_factory=list)  # distinct, oldest first, the newest kept
    actor_count: int = 0  # distinct people, not events
    event_count: int = 1
    read: bool = False
    read_ms: int | None = None  # when it was read, kept to the second (None: unread, or read before it was kept)
    # Only for events that point at nothing to read the text from (kept small by FeedEvent's bounds).
    title: str = ""
    body: str = ""
    url: str = ""

    @property
    def delivery_id(self) -> str | None:
        return self.object_id if self.kind == "message" else None

    def mark_read(self, *, now_ms: int) -> None:
        """Read now: kept to the whole second after `updated_ms` (1 byte within 2 minutes, 3 within 24 days)."""
        self.read = True
        self.read_ms = self.updated_ms + max(0, now_ms - self.updated_ms) // 1000 * 1000


def _short(value: str) -> bytes:
    data = value.encode()
    if len(data) > 255:
        raise ValueError(f"{value[:20]!r}... is longer than 255 bytes")
    return bytes([len(data)]) + data


def _long(value: str) -> bytes:
    data = value.encode()
    return struct.pack(">H", len(data)) + data


def _object_bytes(object_id: str) -> tuple[int, bytes]:
    try:
        parsed = uuid.UUID(object_id)
    except ValueError:
        return OBJECT, _short(object_id)
    # Only ids whose text is exactly what UUID gives back are packed as 16 bytes.
    if object_id in (str(parsed), parsed.hex):
        return OBJECT | OBJECT_UUID | (0 if "-" in object_id else HEX_UUID), parsed.bytes
    return OBJECT, _short(object_id)


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _numeric(actor_ids: list[str]) -> bool:
    return all(actor.isascii() and actor.isdigit() and (actor == "0" or actor[0] != "0") for actor in actor_ids)


def actor_bytes(actor_id: str) -> bytes:
    """How `actor_id` appears in a record (as one of its actors): a record without these bytes
    does not name the actor, which the write path checks before decoding anything."""
    return _varint(int(actor_id)) if _numeric([actor_id]) else _short(actor_id)


def pack_entry(entry: FeedEntry) -> bytes:
    """The entry's record, its length prefix included."""
    code = KIND_CODES.get(entry.kind, 0)
    flags = (READ if entry.read else 0) | (code << KIND_SHIFT)
    tail = b""
    if entry.rollup is not None:
        flags |= ROLLUP
        tail += entry.rollup
    tail += b"" if code else _short(entry.kind)
    tail += _varint(max(0, entry.updated_ms - entry.created_ms) // 1000)
    tail += _varint(entry.actor_count) + _varint(entry.event_count)
    if entry.object_id is not None:
        object_flags, data = _object_bytes(entry.object_id)
        flags |= object_flags
        tail += data
    numeric = _numeric(entry.actor_ids)
    tail += _varint(2 * len(entry.actor_ids) + numeric)
    tail += b"".join(_varint(int(actor)) if numeric else _short(actor) for actor in entry.actor_ids)
    if entry.title or entry.body or entry.url:
        flags |= TEXT
        tail += _long(entry.title) + _long(entry.body) + _long(entry.url)
    if entry.read and entry.read_ms is not None:
        tail += _varint(max(0, entry.read_ms - entry.updated_ms) // 1000)
    body = _HEAD.pack(flags, bytes.fromhex(entry.entry_id), entry.updated_ms.to_bytes(6, "big")) + tail
    return _varint(len(body)) + body


class _Reader:
    def __init__(self, data: bytes, offset: int = 0):
        self.data, self.offset = data, offset

    def take(self, size: int) -> bytes:
        chunk = self.data[self.offset : self.offset + size]
        self.offset += size
        return chunk

    def varint(self) -> int:
        value = shift = 0
        while True:
            byte = self.take(1)[0]
            value |= (byte & 0x7F) << shift
            shift += 7
            if not byte & 0x80:
                return value

    def short(self) -> str:
        return self.take(self.take(1)[0]).decode()

    def long(self) -> str:
        return self.take(struct.unpack(">H", self.take(2))[0]).decode()


def unpack_entry(record: bytes) -> FeedEntry:
    """The entry of one record (as `pack_entry` made it, length prefix included)."""
    reader = _Reader(record)
    size = reader.varint()
    return _read_entry(reader, end=reader.offset + size)


@dataclass
class Record:
    """One packed entry, with the head the write path orders, caps and rolls up by."""

    entry_id: str
    updated_ms: int
    read: bool
    rollup: bytes | None
    raw: bytes  # the whole record, length prefix included
    kind_code: int = 0  # KIND_CODES (0: another kind, spelled out in the record)

    def entry(self) -> FeedEntry:
        return unpack_entry(self.raw)

    def actor_ids(self) -> list[str]:
        """The actor ids alone, skipping over the rest (the write path counts a person's entries)."""
        reader = _Reader(self.raw)
        reader.varint()
        flags = reader.take(_HEAD.size)[0]
        if flags & ROLLUP:
            reader.offset += DIGEST_BYTES
        if not flags >> KIND_SHIFT:
            reader.short()
        reader.varint(), reader.varint(), reader.varint()
        if flags & OBJECT_UUID:
            reader.offset += 16
        elif flags & OBJECT:
            reader.short()
        return _read_actors(reader)

    @classmethod
    def of(cls, entry: FeedEntry) -> Record:
        return cls(
            entry.entry_id,
            entry.updated_ms,
            entry.read,
            entry.rollup,
            pack_entry(entry),
            KIND_CODES.get(entry.kind, 0),
        )


def scan_records(data: bytes | None) -> list[Record]:
    """The records of a packed list, reading only their heads."""
    data = data or b""
    reader, records = _Reader(data), []
    while reader.offset < len(data):
        start = reader.offset
        size = reader.varint()
        flags, entry_id, updated = _HEAD.unpack_from(data, reader.offset)
        rollup_at = reader.offset + _HEAD.size
        rollup = data[rollup_at : rollup_at + DIGEST_BYTES] if flags & ROLLUP else None
        reader.offset += size
        records.append(
            Record(
                entry_id.hex(),
                int.from_bytes(updated, "big"),
                bool(flags & READ),
                rollup,
                data[start : reader.offset],
                flags >> KIND_SHIFT,
            )
        )
    return records


def _read_actors(reader: _Reader) -> list[str]:
    actors = reader.varint()
    if actors & 1:
        return [str(reader.varint()) for _ in range(actors // 2)]
    return [reader.short() for _ in range(actors // 2)]


def _read_entry(reader: _Reader, *, end: int) -> FeedEntry:
    flags, entry_id, updated = _HEAD.unpack_from(reader.data, reader.offset)
    reader.offset += _HEAD.size
    rollup = reader.take(DIGEST_BYTES) if flags & ROLLUP else None
    kind = KIND_NAMES.get(flags >> KIND_SHIFT) or reader.short()
    updated_ms = int.from_bytes(updated, "big")
    created_ms = updated_ms - reader.varint() * 1000
    actor_count, event_count = reader.varint(), reader.varint()
    object_id = None
    if flags & OBJECT_UUID:
        parsed = uuid.UUID(bytes=reader.take(16))
        object_id = parsed.hex if flags & HEX_UUID else str(parsed)
    elif flags & OBJECT:
        object_id = reader.short()
    actor_ids = _read_actors(reader)
    title = body = url = ""
    if flags & TEXT:
        title, body, url = reader.long(), reader.long(), reader.long()
    read_ms = None
    if flags & READ and reader.offset < end:
        read_ms = updated_ms + reader.varint() * 1000
    return FeedEntry(
        entry_id=entry_id.hex(),
        kind=kind,
        created_ms=created_ms,
        updated_ms=updated_ms,
        rollup=rollup,
        object_id=object_id,
        actor_ids=actor_ids,
        actor_count=actor_count,
        event_count=event_count,
        read=bool(flags & READ),
        read_ms=read_ms,
        title=title,
        body=body,
        url=url,
    )


class FeedRecordsAttribute(Attribute[list[Record]]):
    """A feed's entries: the records joined in one binary attribute, newest first.

    Loading reads only the records' heads (`scan_records`); an entry is decoded when asked
    for (`Record.entry`). Storing joins the records as they are: a record the write path did
    not touch is stored byte for byte as it was read.
    """

    attr_type = BINARY

    def serialize(self, value: list[Record]) -> bytes:
        return b"".join(record.raw for record in value)

    def deserialize(self, value: bytes) -> list[Record]:
        return scan_records(value)


class EventDigestsAttribute(Attribute[list[bytes]]):
    """Digests (`digest`) of the events a feed applied, newest last, joined in one binary attribute."""

    attr_type = BINARY

    def serialize(self, value: list[bytes]) -> bytes:
        return b"".join(value)

    def deserialize(self, value: bytes) -> list[bytes]:
        return [value[i : i + DIGEST_BYTES] for i in range(0, len(value), DIGEST_BYTES)]


# --- the map format -------------------------------------------------------------
# A feed item holding a list of maps under `entries` (and event ids under `event_ids`)
# is read through these and stored packed at its next write. They, and the `legacy_*`
# attributes of `Feed`, can go once no stored feed item has either attribute, that is
# once this counts 0 in every deployment (a feed written once by this code has neither):
#   aws dynamodb scan --table-name <DYNAMODB_TABLE_PREFIX>feed --select COUNT \
#     --filter-expression "attribute_exists(entries) OR attribute_exists(event_ids)"


def legacy_feed_upgrade(feed: Feed) -> None:
    """Give a `Feed` read in the map format its packed form (in memory; its next write stores it)."""
    if feed.legacy_entries is not None:
        feed.records = [Record.of(legacy_entry(entry)) for entry in feed.legacy_entries]
        feed.legacy_entries = None
    if feed.legacy_event_ids is not None:
        feed.applied = [digest(event_id) for event_id in feed.legacy_event_ids]
        feed.legacy_event_ids = None


def legacy_entry(entry) -> FeedEntry:
    """The entry of a map-format `LegacyFeedEntry` (a map with its text inline)."""
    object_id = entry.delivery_id
    url = entry.url or ""
    if entry.kind == "reply" and "#c-" in url:
        object_id = url.rsplit("#c-", 1)[1]  # "/c/<parent>/#c-<reply>": the text is read from the reply
    return FeedEntry(
        entry_id=entry.entry_id,
        kind=entry.kind,
        created_ms=iso_to_ms(entry.created_at),
        updated_ms=iso_to_ms(entry.updated_at),
        rollup=digest(entry.rollup_key) if entry.rollup_key else None,
        object_id=object_id,
        actor_ids=list(entry.actor_ids or []),
        actor_count=int(entry.actor_count or 0),
        event_count=int(entry.event_count or 1),
        read=bool(entry.read),
        title="" if object_id else (entry.title or ""),
        body="" if object_id else (entry.body or ""),
        url="" if object_id else url,
    )
