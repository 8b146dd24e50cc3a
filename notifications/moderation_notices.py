"""The inbox notices of a moderation decision (social.moderation.signals' receiver): the author
of a comment hidden, or shown again, and each reporter of a case staff decided.

Each is a `moderation` entry with its text inline (it points at nothing: a hidden comment
cannot be opened), kept as a kind of text and its parameters (notifications/feed/notice_texts.py),
worded in the reader's language when read. Its event id names the decision, so the feed writes it once however often
the decision is sent (a retried staff action): the author's by comment, decision and episode
(hides and unhides alternate: the count of earlier unhides tells them apart), a reporter's by
comment and reporter (one notice per report, whatever staff decide later). Nobody can turn
these off: they are not among the preferences' kinds. Crash-safe: each decision's notices are a
promise (`ModerationNotice`, an outbox job) recorded with or before the decision. A reporter's notice names neither the
author nor the text: it quotes what the reporter saw, no more than the first words.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from django.urls import reverse
from django.utils.translation import gettext_noop

from notifications.feed.events import FeedEvent
from notifications.feed.notice_texts import notice_body
from notifications.feed.services import feed_append
from notifications.outbox import OutboxJob, OutboxRun, outbox_add, outbox_send
from social.models import Report, ReportCase
from social.selectors import comment_find

if TYPE_CHECKING:
    from project.dynamo.transactions import LabelledTransactWrite
    from social.models import Comment

logger = logging.getLogger(__name__)


def case_find(*, comment_id: str) -> ReportCase | None:
    try:
        return ReportCase.get(comment_id, consistent_read=True)
    except ReportCase.DoesNotExist:
        return None


MODERATION_KIND = "moderation"
QUOTE_CHARS = 60


def _quote(body: str) -> str:
    """The first words of the comment (quoted when worded: notifications/feed/notice_texts.py)."""
    text = " ".join(body.split())
    return f"{text[:QUOTE_CHARS]}{'…' if len(text) > QUOTE_CHARS else ''}"


def _author_event(*, comment_id: str, body: str, decision: str, by: str, episode: int) -> FeedEvent | None:
    quote = _quote(body)
    if decision == "hide":
        title = gettext_noop("Your comment was hidden")
        text = notice_body("comment-hidden", quote=quote, by="reports" if by == "reports" else "moderators")
        url = ""
    elif decision == "unhide":
        title = gettext_noop("Your comment is visible again")
        text = notice_body("comment-unhidden", quote=quote)
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
    text = notice_body("report-hidden" if hidden else "report-kept")
    return FeedEvent(
        event_id=f"moderation-report:{comment_id}:{reporter_id}",
        kind=MODERATION_KIND,
        actor_id=None,
        rollup_key=None,
        title=gettext_noop("Your report was looked at"),
        body=text,
        url="",
    )


def _in_force(*, comment: Comment | None, decision: str, case: ReportCase | None) -> bool:
    """The decision holds now: a promise recorded before a staff decision whose writes then failed
    (or were undone since) tells nobody."""
    if decision == "hide":
        return comment is None or bool(comment.hidden)
    if decision == "unhide":
        return comment is not None and not comment.hidden
    if decision == "delete":
        return comment is None or bool(comment.deleted_at)
    return case is not None and case.decision == decision  # resolve


@dataclass(frozen=True)
class ModerationNotice(OutboxJob):
    """The promise to tell of a moderation decision (social.moderation.signals), an outbox job
    (notifications/outbox.py): recorded in the transaction of a hide by reports, or in one of its
    own just before a staff decision's writes, kept by the request right after the decision, or
    by `process_feed_retries` when the request died first. Its run checks the decision is in
    force, then writes the notices, each once whatever runs twice (their event ids)."""

    kind: ClassVar[str] = MODERATION_KIND
    comment_id: str
    author_id: str
    decision: str
    by: str
    episode: int

    @property
    def job_id(self) -> str:
        return f"{self.comment_id}:{self.decision}:{self.by}:{self.episode}"

    @property
    def user_id(self) -> str:
        return self.author_id

    def run(self, *, inline: bool) -> OutboxRun:
        comment = comment_find(comment_id=self.comment_id)
        case = case_find(comment_id=self.comment_id) if self.decision == "resolve" else None
        if not _in_force(comment=comment, decision=self.decision, case=case):
            logger.info("moderation notice of %s on %s: not in force, nobody told", self.decision, self.comment_id)
            return OutboxRun()
        _notices_write(
            comment=comment,
            comment_id=self.comment_id,
            author_id=self.author_id,
            decision=self.decision,
            by=self.by,
            episode=self.episode,
        )
        return OutboxRun()


def _notices_write(
    *, comment: Comment | None, comment_id: str, author_id: str, decision: str, by: str, episode: int
) -> None:
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


def _job(*, comment_id: str, author_id: str, decision: str, by: str, episode: int) -> ModerationNotice:
    return ModerationNotice(comment_id=comment_id, author_id=author_id, decision=decision, by=by, episode=episode)


def moderation_notice_promise(
    *,
    transaction: LabelledTransactWrite,
    comment_id: str,
    author_id: str,
    decision: str,
    by: str,
    episode: int,
    **_signal: object,
) -> None:
    """Receiver of moderation_deciding: the promise added to the decision's transaction (one put)."""
    job = _job(comment_id=comment_id, author_id=author_id, decision=decision, by=by, episode=episode)
    outbox_add(transaction, job=job)


def moderation_notice(
    *, comment_id: str, author_id: str, decision: str, by: str, episode: int, **_signal: object
) -> None:
    """Receiver of moderation_decided: keep the promise now (`outbox_send`, which never raises:
    what fails is left to `process_feed_retries`). Twice: each notice written once (the event ids)."""
    outbox_send(_job(comment_id=comment_id, author_id=author_id, decision=decision, by=by, episode=episode))
