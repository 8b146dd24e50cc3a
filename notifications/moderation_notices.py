"""The inbox notices of a moderation decision (social.moderation.signals' receiver): the author
of a comment hidden, or shown again, and each reporter of a case staff decided.

Each is a `moderation` entry with its text inline (it points at nothing: a hidden comment
cannot be opened). Its event id names the decision, so the feed writes it once however often
the decision is sent (a retried staff action): the author's by comment, decision and episode
(hides and unhides alternate: the count of earlier unhides tells them apart), a reporter's by
comment and reporter (one notice per report, whatever staff decide later). Nobody can turn
these off: they are not among the preferences' kinds. A reporter's notice names neither the
author nor the text: it quotes what the reporter saw, no more than the first words.
"""

from __future__ import annotations

import logging

from django.urls import reverse
from django.utils.translation import gettext_noop

from notifications.feed.events import FeedEvent
from notifications.feed.services import feed_append
from social.models import Report
from social.selectors import comment_find

logger = logging.getLogger(__name__)

MODERATION_KIND = "moderation"
QUOTE_CHARS = 60
ASK = "If you think this is a mistake, reply to any mail from this site or write to its operators, naming the comment."


def _quote(body: str) -> str:
    text = " ".join(body.split())
    return f"“{text[:QUOTE_CHARS]}{'…' if len(text) > QUOTE_CHARS else ''}”" if text else "your comment"


def _author_event(*, comment_id: str, body: str, decision: str, by: str, episode: int) -> FeedEvent | None:
    quote = _quote(body)
    if decision == "hide":
        why = "after several people reported it" if by == "reports" else "by the moderators"
        title = gettext_noop("Your comment was hidden")
        text = f"Your comment {quote} was hidden {why}: nobody else sees it now. {ASK}"
        url = ""
    elif decision == "unhide":
        title = gettext_noop("Your comment is visible again")
        text = f"The moderators looked at your comment {quote} and it is visible to everyone again."
        url = reverse("comment", args=[comment_id])
    else:
        return None
    return FeedEvent(
        event_id=f"moderation:{comment_id}:{decision}:{episode}",
        kind=MODERATION_KIND,
        actor_id=None,
        rollup_key=None,
        title=title,
        body=text[:400],
        url=url,
    )


def _reporter_event(*, comment_id: str, reporter_id: str, hidden: bool) -> FeedEvent:
    if hidden:
        text = "The moderators looked at the comment you reported and hid it. Thank you for telling us."
    else:
        text = (
            "The moderators looked at the comment you reported and found it within the rules: "
            "it stays up. Thank you for telling us."
        )
    return FeedEvent(
        event_id=f"moderation-report:{comment_id}:{reporter_id}",
        kind=MODERATION_KIND,
        actor_id=None,
        rollup_key=None,
        title=gettext_noop("Your report was looked at"),
        body=text,
        url="",
    )


def moderation_notice(
    *, comment_id: str, author_id: str, decision: str, by: str, episode: int, **_signal: object
) -> None:
    """Write the decision's notices (the signal's receiver). Twice: each written once (the event
    ids). A busy feed queues its notice for `process_feed_retries`; any other failure raises to
    the sender, which logs it (the decision stands)."""
    comment = comment_find(comment_id=comment_id)
    body = comment.body if comment is not None else ""
    event = _author_event(comment_id=comment_id, body=body, decision=decision, by=by, episode=episode)
    if event is not None:
        feed_append(user_id=author_id, event=event)
    if by != "staff":
        return  # reports hid it: the case stays open for staff, its reporters hear of their decision
    hidden = comment is None or bool(comment.hidden) or bool(comment.deleted_at)
    for report in Report.query(comment_id, consistent_read=True):
        feed_append(
            user_id=report.reporter_id,
            event=_reporter_event(comment_id=comment_id, reporter_id=report.reporter_id, hidden=hidden),
        )
