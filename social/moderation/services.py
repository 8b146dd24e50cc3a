"""Reporting a comment: one report per person, exact counts, a hide at the threshold exactly once.

A report is one TransactWriteItems (no read of the case first):

1. the `reports` item, put on condition it is absent (the key is comment + reporter, so "one
   report per person per comment" is the database's constraint: a second report, however
   concurrent, fails it and changes nothing);
2. the comment's `report_cases` item, updated with ADDs (reporters, open reporters, weighted
   score, the reason's count) and SETs (last reported, the open queue's keys), on a condition
   saying whether this report crosses the author's hide threshold (standing.py: a report
   weighing nothing, or against an author reports never hide, has no condition and never
   crosses): the plain path's condition is
   "the score stays under the threshold with this report, or reports hid it already, or staff
   chose to keep it"; the crossing path's is the opposite, and it also stamps
   `hidden_by_reports_at` (absent before: once) and
3. (crossing path only) hides the comment (condition: still visible, not deleted).

The reporter tries the plain path first; the case's condition failing sends it to the crossing
path and back, as the counts move under it, so of concurrent reporters exactly one hides the
comment. ADDs commute: no count is lost whatever the order, and on AWS concurrent transactions
on one case conflict and are retried (`transact`). Dies half way: nothing was written (one
transaction). Twice: the second answers the first report (`created=False`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.db import transaction as db_transaction
from django.utils.translation import gettext

from project.clock import clock
from project.dynamo.transactions import LabelledTransactWrite, TransactOutcome, transact
from project.errors import ApplicationError, Conflict, NotFound
from social.account.limits import account_limit_enforce
from social.edit_history import comment_version
from social.models import Comment, ModerationAction, Report, ReportCase
from social.moderation.reasons import NOTE_MAX_LENGTH, REASONS, SYSTEM_REPORTER
from social.moderation.signals import moderation_decided, moderation_deciding, unhides_before
from social.moderation.standing import hide_threshold, report_weight
from social.selectors import comment_find
from social.services import comment_visibility_actions

if TYPE_CHECKING:
    from pynamodb.expressions.condition import Condition
    from pynamodb.expressions.update import Action

logger = logging.getLogger(__name__)

REPORT_ATTEMPTS = 16  # the plain and crossing paths may swap a few times under concurrent reporters
OPEN = "open"
CLOSED = "closed"


@dataclass(frozen=True)
class ReportState:
    comment_id: str
    reason: str
    note: str
    reported_at: str
    created: bool  # False: this person had reported it already (nothing written)
    hid_comment: bool = False  # this report crossed the threshold and hid the comment


def report_find(*, comment_id: str, reporter_id: str) -> Report | None:
    try:
        return Report.get(comment_id, reporter_id, consistent_read=True)
    except Report.DoesNotExist:
        return None


def _state(report: Report, *, created: bool, hid: bool = False) -> ReportState:
    return ReportState(
        comment_id=report.comment_id,
        reason=report.reason,
        note=report.note or "",
        reported_at=report.created_at,
        created=created,
        hid_comment=hid,
    )


def report_clean(*, reason: str, note: str) -> tuple[str, str]:
    """The reason and note as stored, or a 400 naming the field at fault."""
    if reason not in REASONS:
        raise ApplicationError(
            gettext("Choose one of: %(join_reasons)s.") % {"join_reasons": ", ".join(REASONS)}, field="reason"
        )
    note = " ".join(note.split())
    if len(note) > NOTE_MAX_LENGTH:
        raise ApplicationError(
            gettext("At most %(note_max_length)s characters.") % {"note_max_length": NOTE_MAX_LENGTH}, field="note"
        )
    return reason, note


def _crossing(weight: int, threshold: int) -> Condition:
    """The case's state in which a report of `weight` hides the comment."""
    reaches: Condition = ReportCase.score >= threshold - weight
    if weight >= threshold:
        reaches = reaches | ReportCase.comment_id.does_not_exist()
    not_kept: Condition = ReportCase.staff_kept.does_not_exist() | (ReportCase.staff_kept == False)  # noqa: E712
    crossing: Condition = reaches & ReportCase.hidden_by_reports_at.does_not_exist() & not_kept
    return crossing


def _plain(weight: int, threshold: int) -> Condition:
    """The complement of `_crossing`: this report leaves the comment as it is."""
    stays: Condition = ReportCase.score < threshold - weight
    if weight < threshold:
        stays = stays | ReportCase.comment_id.does_not_exist()
    plain: Condition = stays | ReportCase.hidden_by_reports_at.exists() | (ReportCase.staff_kept == True)  # noqa: E712
    return plain


def report_create(
    *, comment_id: str, reporter_id: str, reason: str, note: str = "", system: bool = False
) -> ReportState:
    """Report a comment (see the module's docstring for the transaction and its guarantees).

    Again by the same person: a no-op answering the first report, whatever the comment's state
    now (a client retrying after the report that hid it gets its answer, not a 404). Unknown,
    hidden or deleted for the reporter: NotFound; one's own comment: 400. Over LIMIT_REPORT:
    RateLimited, nothing written (a repeat costs no unit). `system` (the spam screen's flag): no
    limit is counted, and the report weighs nothing (SYSTEM_REPORTER has no account).
    """
    reason, note = report_clean(reason=reason, note=note)
    existing = report_find(comment_id=comment_id, reporter_id=reporter_id)
    if existing is not None:
        return _state(existing, created=False)
    comment = comment_find(comment_id=comment_id)
    if comment is None or comment.hidden or comment.deleted_at:
        raise NotFound(gettext("No such comment."))
    if comment.author_id == reporter_id:
        raise ApplicationError(gettext("You can't report your own comment."))
    if not system:
        account_limit_enforce(name="report", user_id=reporter_id)
    weight = 0 if system else report_weight(reporter_id=reporter_id)
    threshold = hide_threshold(author_id=comment.author_id)
    can_hide = weight > 0 and threshold is not None
    now = clock.now_iso()
    # The version read here: later edits cannot change what staff see was reported (social.edit_history).
    report = Report(comment_id, reporter_id, reason=reason, note=note or None, weight=weight, created_at=now)
    report.version = comment_version(comment)
    path = {"crossing": False}
    already: list[Report] = []

    def build(transaction: LabelledTransactWrite) -> None:
        transaction.save(report, condition=Report.reporter_id.does_not_exist(), label="report")
        actions: list[Action] = [
            ReportCase.author_id.set(comment.author_id),
            ReportCase.reporters.add(1),
            ReportCase.open_reporters.add(1),
            ReportCase.score.add(weight),
            getattr(ReportCase, f"reason_{reason}").add(1),
            ReportCase.first_reported_at.set(ReportCase.first_reported_at | now),
            ReportCase.last_reported_at.set(now),
            ReportCase.status.set(OPEN),
            ReportCase.queue.set(OPEN),
            ReportCase.newest_key.set(f"{now}#{comment_id}"),
        ]
        if path["crossing"]:
            actions.append(ReportCase.hidden_by_reports_at.set(now))
        condition: Condition | None = None  # a report that cannot hide needs no condition
        if can_hide and threshold is not None:
            condition = _crossing(weight, threshold) if path["crossing"] else _plain(weight, threshold)
        transaction.update(ReportCase(comment_id), actions=actions, condition=condition, label="case")
        if path["crossing"]:
            visible: Condition = (
                Comment.comment_id.exists()
                & (Comment.hidden == False)  # noqa: E712
                & Comment.deleted_at.does_not_exist()
            )
            hide = comment_visibility_actions(comment=comment, hidden=True, hidden_by="reports")
            transaction.update(Comment(comment_id), actions=hide, condition=visible, label="comment")
            # The author's notice, promised in the hide's own transaction (social.moderation.signals).
            moderation_deciding.send(sender=Comment, transaction=transaction, **_hide_by_reports(comment))

    def on_failed(outcome: TransactOutcome) -> bool:
        failed = outcome.failed_labels
        if "report" in failed:
            found = report_find(comment_id=comment_id, reporter_id=reporter_id)
            if found is not None:
                already.append(found)
                return False
            return True  # gone again (account deletion): try again
        if "case" in failed:
            # The counts moved (another report crossed first, or staff closed the case): the
            # other path holds now. A comment that report hid is a race this report still counts in.
            path["crossing"] = not path["crossing"]
            return True
        return False  # the case would cross but the comment was hidden by staff or deleted: 404

    outcome = transact(build, what="report_create", attempts=REPORT_ATTEMPTS, on_failed=on_failed)
    if already:
        return _state(already[0], created=False)
    if not outcome.ok:
        if "comment" in outcome.failed_labels:
            raise NotFound(gettext("No such comment."))
        raise Conflict(gettext("report_create: too many concurrent reports, retry shortly."))
    logger.info("comment %s reported by user %s (%s)", comment_id, reporter_id, reason)
    if path["crossing"]:
        logger.warning("comment %s hidden by reports (threshold %s)", comment_id, threshold)
        _audit_hide_by_reports(comment_id=comment_id, threshold=threshold)
        _tell_author(comment=comment)
    return _state(report, created=True, hid=path["crossing"])


def comment_flag(*, comment_id: str, note: str) -> None:
    """The spam screen's flag of a published comment: a "spam" report from SYSTEM_REPORTER, which
    puts it in staff's queue and never counts toward a hide. Never raises (a flag that fails is
    logged; the comment stays published). Twice: one report."""
    try:
        report_create(comment_id=comment_id, reporter_id=SYSTEM_REPORTER, reason="spam", note=note, system=True)
    except ApplicationError as error:
        logger.error("flag of comment %s not recorded: %s", comment_id, error.message)


def _hide_by_reports(comment: Comment) -> dict[str, object]:
    return {
        "comment_id": comment.comment_id,
        "author_id": comment.author_id,
        "decision": "hide",
        "by": "reports",
        "episode": unhides_before(comment_id=comment.comment_id),
    }


def _tell_author(*, comment: Comment) -> None:
    """The author's notice of the hide the threshold made (social.moderation.signals); never raises.
    Only the one report that crossed sends it; dying before it leaves the notice to the promise
    its transaction recorded (`process_feed_retries` keeps it)."""
    for _receiver, result in moderation_decided.send_robust(sender=Comment, **_hide_by_reports(comment)):
        if isinstance(result, Exception):
            logger.error("moderation notice of the hide of %s failed: %r", comment.comment_id, result)


def _audit_hide_by_reports(*, comment_id: str, threshold: int | None) -> None:
    """The audit line of a hide the threshold made (no staff; written by the one report that
    hid it, after its commit: a process dying in between leaves the hide without its line, and
    the case keeps `hidden_by_reports_at`)."""
    with db_transaction.atomic():
        ModerationAction.objects.create(
            staff=None,
            action="hide",
            target_type="comment",
            target_id=comment_id,
            detail=f"hidden by reports (threshold {(threshold or 0) / 100:g} reporters)",
            source="reports",
            outcome="done",
        )
