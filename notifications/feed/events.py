"""Feed events: something that happened for a user, validated on construction.

A `FeedEvent`'s bounds keep one entry small, so a full feed stays far below DynamoDB's
400 KB item limit. Its id names the entry it creates (`feed_entry_id`) and its place in
the retry queue (`feed_retry_key`), so applying or queueing it again finds the first time.
"""

from __future__ import annotations

import hashlib
import json
import zlib
from dataclasses import asdict, dataclass

from django.utils.translation import gettext

from project.errors import ApplicationError

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
FEED_RETRY_SHARDS = 4  # partitions of the `feed_retry` table (see `feed_retry_key`)


# Feed kinds whose preference kind has another name (notifications.preferences.selectors.KINDS).
THREAD_KIND = "thread"  # a reply in a thread the person watches
MENTION_KIND = "mention"
PREFERENCE_KINDS = {THREAD_KIND: "reply"}


class FeedEventTooLarge(ApplicationError):
    """A feed event whose text or ids exceed the bounds above (a 400 on `field`)."""


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
    # The person wants this kind by e-mail too (decided at fan-out from their preferences): the
    # feed write that applies it also schedules the mail (notifications.mail.queue), in its
    # own transaction. Serialised with the event, so it survives `feed_retry`.
    notify_email: bool = False
    notify_push: bool = False  # ... and by Web Push (due at once, notifications/push/sender.py)

    def __post_init__(self):
        for name in ("event_id", "kind"):
            if not getattr(self, name):
                raise FeedEventTooLarge(gettext("A feed event needs a %(name)s.") % {"name": name}, field=name)
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
                    gettext("At most %(limit)s characters in a feed entry's %(name)s (got %(len_value)s).")
                    % {"limit": limit, "name": name, "len_value": len(value)},
                    field=name,
                )
        text_bytes = sum(len(value.encode()) for value in (self.title, self.body, self.url))
        if text_bytes > FEED_TEXT_MAX_BYTES:
            raise FeedEventTooLarge(
                gettext(
                    "Title, body and url of a feed entry take %(text_bytes)s bytes in UTF-8; at most "
                    "%(feed_text_max_bytes)s (about %(feed_text_max_bytes_3)s Japanese characters)."
                )
                % {
                    "text_bytes": text_bytes,
                    "feed_text_max_bytes": FEED_TEXT_MAX_BYTES,
                    "feed_text_max_bytes_3": FEED_TEXT_MAX_BYTES // 3,
                },
                field="body",
            )

    @property
    def source_id(self) -> str | None:
        """The id the entry's text is read from when shown: the reply, or the delivery."""
        return self.object_id or self.delivery_id

    @property
    def preference_kind(self) -> str:
        """The kind people choose for in their preferences: a watched thread's reply is a "reply"."""
        return PREFERENCE_KINDS.get(self.kind, self.kind)

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


def feed_retry_key(user_id: str, event: FeedEvent) -> tuple[str, str]:
    """The `feed_retry` key of an event for a user: (shard from a hash of the user id, retry id).
    A user id is never an outbox job's kind (notifications/outbox.py), so the two never meet."""
    return str(zlib.crc32(user_id.encode()) % FEED_RETRY_SHARDS), f"{user_id}#{event.event_id}"
