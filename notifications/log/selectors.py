"""The notification log: for each event that concerned the person, per channel (e-mail, push)
what happened and why, newest first. Read from the `sends` ledger (one Query of the person's
partition), which keeps a line MAIL_LEDGER_DAYS; the words of each reason are the ones the
senders record, brought to a short list the page explains."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from notifications.mail.selectors import ledger_of_user

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
    detail: str  # what the sender recorded
    at: datetime


@dataclass
class LogEvent:
    source: str
    kind: str
    at: datetime  # the newest change of any of its channels
    text: str = ""  # what the notification said (the subject of a line that went)
    channels: dict[str, ChannelOutcome] = field(default_factory=dict)


def notification_log(*, user_id: str, limit: int = 200) -> list[LogEvent]:
    """The person's events, newest first, each with its channels' outcomes (one Query)."""
    events: dict[str, LogEvent] = {}
    for line in ledger_of_user(user_id=user_id, limit=limit):
        event = events.setdefault(line.source, LogEvent(source=line.source, kind=line.kind, at=line.at))
        event.at = max(event.at, line.at)
        event.text = event.text or line.subject
        event.channels[line.channel] = ChannelOutcome(
            outcome=line.outcome, reason=reason_words(line.reason, line.outcome), detail=line.reason, at=line.at
        )
    return sorted(events.values(), key=lambda event: event.at, reverse=True)
