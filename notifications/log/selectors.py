"""The notification log: for each event that concerned the person, per channel (inbox, e-mail,
push) what happened and why, newest first.

E-mail and push come from the `sends` ledger (one Query of the person's partition); the inbox
from the person's feed (one GetItem): an event reached the inbox when its entry is there (an
e-mail or push is only ever scheduled with an inbox entry), and was retracted when its entry
left the feed unread (a block or mute, a hidden or deleted comment). Entries that went to the
inbox alone are events of their own, and so are like and reaction notifications that went to
the inbox alone (two Queries: the unread ones and the read ones still kept). Lines are shown
as long as read notifications are kept (NOTIFICATION_READ_RETENTION_DAYS, which is also how
long the ledger keeps them). The words of each reason are the ones the senders record, brought
to a short list the page explains."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings

from notifications.feed.selectors import FeedEntryView, feed_entry_views, feed_read
from notifications.like_selectors import like_read_source, like_unread_source
from notifications.mail.selectors import ledger_of_user
from notifications.preferences.selectors import KINDS
from notifications.subjects import LIKE, REACTION
from project.clock import clock

INBOX, EMAIL, PUSH = "inbox", "email", "push"
CHANNELS = (INBOX, EMAIL, PUSH)

# The reason a sender records -> the log's words (first match by prefix or substring).
REASONS = (
    ("preference off", "preference off"),
    ("turned off", "preference off"),
    ("read before send", "read before send"),
    ("read in the inbox", "read before send"),
    ("thread muted", "thread muted"),
    ("blocked or muted", "person blocked or muted"),
    ("present in a tab", "present in a tab"),
    ("limit", "limit reached"),
    ("not verified", "address unverified"),
    ("no e-mail address", "address unverified"),
    ("already e-mailed", "already sent about this notification"),
    ("no subscribed browser", "no browser subscribed"),
    ("expired", "expired"),
    ("retracted", "retracted"),
    ("gone", "retracted"),
)
RETRACTED = "retracted"


def reason_words(reason: str, outcome: str) -> str:
    """The log's short reason for a ledger line ("" for a plain `sent`)."""
    if outcome in ("sent", "sending"):
        return ""
    lowered = reason.lower()
    for said, words in REASONS:
        if said in lowered:
            return words
    return lowered[:120]


@dataclass(frozen=True)
class ChannelOutcome:
    outcome: str  # sent, failed, unknown, skipped, sending
    reason: str  # the log's words ("" when sent)
    detail: str  # what the sender recorded (the inbox: read or unread)
    at: datetime


@dataclass
class LogEvent:
    source: str
    kind: str
    at: datetime  # the newest change of any of its channels
    text: str = ""  # what the notification said (the subject of a line that went)
    channels: dict[str, ChannelOutcome] = field(default_factory=dict)


def _inbox_outcome(view: FeedEntryView | None, *, at: datetime) -> ChannelOutcome:
    """The inbox's part in an event whose entry is `view` (None: no longer in the feed)."""
    if view is None or view.hidden or (view.removed and view.unread):
        detail = "no longer in the inbox" if view is None else "taken out of the inbox"
        return ChannelOutcome(outcome="skipped", reason=RETRACTED, detail=detail, at=at)
    detail = "unread" if view.unread else "read"
    return ChannelOutcome(outcome="sent", reason="", detail=detail, at=view.updated_at)


def notification_log(*, user_id: str, limit: int = 200) -> list[LogEvent]:
    """The person's events, newest first, each with its channels' outcomes (one Query of the
    ledger, one GetItem of the feed, the reads that word the feed's entries, two Queries of
    the like notifications)."""
    oldest = clock.utcnow() - timedelta(days=int(settings.NOTIFICATION_READ_RETENTION_DAYS))
    feed = feed_read(user_id=user_id)
    views = {view.id: view for view in feed_entry_views(feed.entries, silenced=frozenset(feed.silenced or ()))}
    lines = [line for line in ledger_of_user(user_id=user_id, limit=limit) if line.at >= oldest]
    events: dict[str, LogEvent] = {}
    for line in lines:
        event = events.setdefault(line.source, LogEvent(source=line.source, kind=line.kind, at=line.at))
        event.at = max(event.at, line.at)
        event.text = event.text or line.subject
        event.channels[line.channel] = ChannelOutcome(
            outcome=line.outcome, reason=reason_words(line.reason, line.outcome), detail=line.reason, at=line.at
        )
        if line.kind in (LIKE, REACTION):  # its e-mail or push was scheduled with its inbox notification
            event.channels.setdefault(INBOX, ChannelOutcome(outcome="sent", reason="", detail="", at=line.at))
        elif line.kind in KINDS and line.entry_id:
            view = views.get(line.entry_id)
            event.channels.setdefault(INBOX, _inbox_outcome(view, at=line.at))
            event.text = event.text or (view.text if view else "")
    told = {line.entry_id for line in lines}
    for view in views.values():  # entries that went to the inbox alone
        if view.id in told or view.updated_at < oldest:
            continue
        events[f"entry:{view.id}"] = LogEvent(
            source=f"entry:{view.id}",
            kind=view.kind,
            at=view.updated_at,
            text=view.text,
            channels={INBOX: _inbox_outcome(None if view.hidden else view, at=view.updated_at)},
        )
    told_likes = {(line.kind, line.entry_id) for line in lines if line.kind in (LIKE, REACTION)}
    likes = like_unread_source(user_id=user_id, before=None, limit=limit)
    likes += like_read_source(user_id=user_id, before=None, limit=limit)
    for note in likes:  # like and reaction notifications that went to the inbox alone
        if (note.kind, note.comment_id) in told_likes or note.updated_at < oldest:
            continue
        detail = "unread" if note.unread else "read"
        events[note.id] = LogEvent(
            source=note.id,
            kind=note.kind,
            at=note.updated_at,
            text=note.text,
            channels={INBOX: ChannelOutcome(outcome="sent", reason="", detail=detail, at=note.updated_at)},
        )
    ordered = sorted(events.values(), key=lambda event: event.at, reverse=True)
    return ordered[:limit]
