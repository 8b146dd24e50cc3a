"""Reads of the moderation queue: open report cases newest first or most reported first, a
case with its reports, and whether a person reported a comment.

The queue's order comes from the sparse, keys-only GSIs `open_newest` and `open_most` of
`report_cases` (PK `queue` = "open", only while a case is open: a Query, never a Scan); the
cases listed are then read again strongly consistently (one BatchGetItem), so counts and states
shown are current and a case closed a moment ago (which the index, trailing by up to about a
second on AWS, may still list) is left out. The comments come with one BatchGetItem and their
authors with one relational query.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from project.dynamo.cursors import ISO_AT, UUID, cursor_encode, cursor_fields
from social.edit_history import VersionView, comment_versions, version_diff
from social.models import Comment, Report, ReportCase
from social.moderation.reasons import REASONS, SYSTEM_REPORTER, reason_label
from social.selectors import Author, authors_by_id, comment_find

QUEUE_PAGE_SIZE = 25
QUEUE_PAGE_MAX = 100
REPORTS_SHOWN_MAX = 200  # the reports one case page lists (a case past it shows the counts)
Order = Literal["newest", "most"]
_CURSORS = {
    "newest": {"at": ISO_AT, "comment_id": UUID},
    "most": {"reporters": r"\d{1,9}", "comment_id": UUID},
}


@dataclass(frozen=True)
class CaseView:
    comment_id: str
    author: Author | None
    author_active: bool
    body: str
    hidden: bool
    hidden_by: str | None  # "reports", "staff", or None
    deleted: bool
    reporters: int  # distinct, ever
    open_reporters: int  # since the last staff decision
    score: float  # weighted reporters since the last decision (new accounts count less)
    reasons: dict[str, int]  # reason -> reports, ever; only reasons given
    first_reported_at: str | None
    last_reported_at: str | None
    status: str
    hidden_by_reports_at: str | None
    staff_kept: bool
    decision: str | None
    decided_by: str | None
    decided_at: str | None

    @property
    def reason_counts(self) -> list[tuple[str, int]]:
        """The reasons given, as staff read them (in their language), with their reports."""
        return [(reason_label(reason), count) for reason, count in self.reasons.items()]


@dataclass(frozen=True)
class QueuePage:
    results: list[CaseView]
    next_cursor: str | None


@dataclass(frozen=True)
class ReportView:
    reporter: Author | None  # None: a deleted account, or the system
    by_system: bool  # the spam screen's flag (a watched word), no person: staff views say "the system"
    reason: str
    reason_label: str
    note: str
    created_at: str
    counted: bool  # False: its reporter had no standing (standing.py), it weighs nothing toward a hide
    version: int  # the comment's version it was made against (social.edit_history)


def _reasons(case: ReportCase) -> dict[str, int]:
    counts = {reason: int(getattr(case, f"reason_{reason}") or 0) for reason in REASONS}
    return {reason: count for reason, count in counts.items() if count}


def _case_views(cases: list[ReportCase]) -> list[CaseView]:
    from django.contrib.auth import get_user_model

    ids = [case.comment_id for case in cases]
    comments = {c.comment_id: c for c in Comment.batch_get(ids, consistent_read=True)} if ids else {}
    author_ids = [case.author_id for case in cases]
    authors = authors_by_id(author_ids) if author_ids else {}
    numeric = [int(uid) for uid in set(author_ids) if uid.isdigit()]
    active = dict(get_user_model().objects.filter(pk__in=numeric).values_list("pk", "is_active"))
    views = []
    for case in cases:
        comment = comments.get(case.comment_id)
        views.append(
            CaseView(
                comment_id=case.comment_id,
                author=authors.get(case.author_id),
                author_active=bool(active.get(int(case.author_id), False)) if case.author_id.isdigit() else False,
                body=comment.body if comment else "",
                hidden=bool(comment and comment.hidden),
                hidden_by=(comment.hidden_by or "staff") if comment and comment.hidden else None,
                deleted=bool(comment and comment.deleted_at),
                reporters=int(case.reporters or 0),
                open_reporters=int(case.open_reporters or 0),
                score=int(case.score or 0) / 100,
                reasons=_reasons(case),
                first_reported_at=case.first_reported_at,
                last_reported_at=case.last_reported_at,
                status=case.status,
                hidden_by_reports_at=case.hidden_by_reports_at,
                staff_kept=bool(case.staff_kept),
                decision=case.decision,
                decided_by=case.decided_by,
                decided_at=case.decided_at,
            )
        )
    return views


def report_queue(*, order: Order = "newest", limit: int | None = None, cursor: str | None = None) -> QueuePage:
    """Open cases, newest report first (`newest`) or most reporters since the last decision
    first (`most`; equal counts in no set order), cursor-paginated."""
    limit = max(1, min(QUEUE_PAGE_MAX, limit or QUEUE_PAGE_SIZE))
    query_name = f"report_queue:{order}"
    start: dict[str, Any] | None = None
    if cursor:
        position = cursor_fields(cursor, query=query_name, fields=_CURSORS[order])
        start = {"queue": {"S": "open"}, "comment_id": {"S": position["comment_id"]}}
        if order == "newest":
            start["newest_key"] = {"S": f"{position['at']}#{position['comment_id']}"}
        else:
            start["open_reporters"] = {"N": position["reporters"]}
    index = ReportCase.newest_index if order == "newest" else ReportCase.most_index
    query = index.query("open", scan_index_forward=False, limit=limit, last_evaluated_key=start)
    listed = [entry.comment_id for entry in query]
    more = bool(query.last_evaluated_key) and len(listed) == limit
    found = {case.comment_id: case for case in ReportCase.batch_get(listed, consistent_read=True)} if listed else {}
    # The index's order; a case closed since the index listed it is left out.
    cases = [found[c] for c in listed if c in found and found[c].status == "open"]
    next_cursor = None
    if more:
        last_id = listed[-1]
        last = found.get(last_id)
        # The index's own position of the last entry listed (its keys as the index held them).
        position_key = query.last_evaluated_key or {}
        if order == "newest":
            at = position_key.get("newest_key", {}).get("S", "").rpartition("#")[0] or (
                last.last_reported_at if last else ""
            )
            payload = {"at": at, "comment_id": last_id}
        else:
            reporters = position_key.get("open_reporters", {}).get("N") or str(int(last.open_reporters) if last else 0)
            payload = {"reporters": reporters, "comment_id": last_id}
        next_cursor = cursor_encode(payload, query=query_name)
    return QueuePage(results=_case_views(cases), next_cursor=next_cursor)


def case_get(*, comment_id: str) -> CaseView | None:
    """One comment's case, read consistently; None if it was never reported."""
    try:
        case = ReportCase.get(comment_id, consistent_read=True)
    except (ReportCase.DoesNotExist, ValueError):
        return None
    return _case_views([case])[0]


def case_reports(*, comment_id: str) -> list[ReportView]:
    """A case's reports, oldest reporter id first (one consistent Query, at most REPORTS_SHOWN_MAX)."""
    reports = list(Report.query(comment_id, consistent_read=True, limit=REPORTS_SHOWN_MAX))
    people = [report.reporter_id for report in reports if report.reporter_id != SYSTEM_REPORTER]
    authors = authors_by_id(people) if people else {}
    full = 100
    views = [
        ReportView(
            reporter=None if report.reporter_id == SYSTEM_REPORTER else authors.get(report.reporter_id),
            by_system=report.reporter_id == SYSTEM_REPORTER,
            reason=report.reason,
            reason_label=reason_label(report.reason),
            note=report.note or "",
            created_at=report.created_at,
            counted=int(report.weight) >= full,
            version=int(report.version or 1),
        )
        for report in reports
    ]
    return sorted(views, key=lambda view: view.created_at, reverse=True)


@dataclass(frozen=True)
class CaseVersions:
    versions: list[VersionView]  # current first, then newest first; [] once its text is deleted
    reported: list[int]  # the versions reports were made against, oldest first
    diff: list[tuple[str, str]]  # from the first reported version to the current body; [] if the same


def case_versions(*, comment_id: str, reports: list[ReportView]) -> CaseVersions:
    """What a reported comment said in each version, which versions were reported, and what
    changed since the first of those (one consistent GetItem and one Query)."""
    comment = comment_find(comment_id=comment_id)
    versions = comment_versions(comment=comment) if comment is not None else []
    reported = sorted({report.version for report in reports})
    bodies = {view.version: view.body for view in versions}
    diff: list[tuple[str, str]] = []
    if versions and reported and reported[0] != versions[0].version and reported[0] in bodies:
        diff = version_diff(bodies[reported[0]], versions[0].body)
    return CaseVersions(versions=versions, reported=reported, diff=diff)


def report_of(*, comment_id: str, reporter_id: str) -> Report | None:
    """The person's report of a comment, read consistently (their own write shows at once)."""
    try:
        return Report.get(comment_id, reporter_id, consistent_read=True)
    except (Report.DoesNotExist, ValueError):
        return None
