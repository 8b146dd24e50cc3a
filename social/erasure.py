"""What `social` keeps about a person: eraser steps and export sections (project/identity/erasure.py).

Comments are **anonymised, not removed**: others' replies hang under them, and a removed item
would cut those threads. Each is emptied and stamped deleted exactly as its author's own delete
does (the pages say "Deleted comment", the API answers `author: null` and an empty body), and
leaves the timeline and its parent's replies unless replies hang under it. What stays: the
tombstone's id, times and thread links, its like and view counts (aggregates of other people's
likes and views) and the author id, a number no account holds once the account row is deleted
(ids are never reused).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model

from project.clock import clock
from project.identity.erasure import erasure_step, export_section
from project.limits.store import limit_forget
from social.account.export_words import DELETED_ACCOUNT, comment_texts, iso_time, people_names
from social.activity.models import activity_model
from social.activity.month_tables import activity_table_months
from social.edit_history import comment_versions_erase
from social.models import Comment, Like, Reaction, Relation, Report

PAGE = 25
EXPORT_PAGE = 100


# --- comments ------------------------------------------------------------------


def _has_replies(comment: Comment) -> bool:
    return bool(comment.has_replies) or any(True for _ in Comment.replies_index.query(comment.comment_id, limit=1))


def comment_anonymise(*, comment_id: str) -> None:
    """Empty one comment of a deleted account and stamp it deleted (if its author had not).

    One conditional UpdateItem, then its earlier bodies (social.edit_history) are deleted; again:
    the same state (the first `deleted_at` is kept).
    """
    comment = Comment.get(comment_id, consistent_read=True)
    actions: list[Any] = [
        Comment.body.set(""),
        Comment.deleted_at.set(Comment.deleted_at | clock.now_iso()),
        Comment.profile_author.remove(),
    ]
    if not _has_replies(comment):  # nothing hangs under it: it leaves the listings
        if comment.timeline_key:
            actions.append(Comment.timeline_key.remove())
        if comment.reply_to:
            actions.append(Comment.reply_to.remove())
    comment.update(actions=actions, condition=Comment.comment_id.exists())
    comment_versions_erase(comment_id=comment_id)


@erasure_step(name="comments", order=20)
def comments_erase(*, user_id: str, cursor: str | None) -> str | None:
    """Up to PAGE of the person's comments (the `author` index, after `cursor`), anonymised."""
    condition = Comment.sort_key > cursor if cursor else None
    page = list(Comment.author_index.query(user_id, range_key_condition=condition, limit=PAGE))
    for key in page:
        comment_anonymise(comment_id=key.comment_id)
    return page[-1].sort_key if len(page) == PAGE else None


# --- blocks and mutes, reports --------------------------------------------------


@erasure_step(name="relations", order=60)
def relations_erase(*, user_id: str, cursor: str | None) -> str | None:
    """The person's own blocks and mutes (their partition). Others' items naming them stay
    until their owners undo them: they name an id no account holds."""
    with Relation.batch_write() as batch:
        for item in Relation.query(user_id, consistent_read=True):
            batch.delete(item)
    return None


@erasure_step(name="reports", order=70)
def reports_erase(*, user_id: str, cursor: str | None) -> str | None:
    """Up to PAGE of the reports the person filed (their reasons and words; the `by_reporter`
    index, "" while it lists more). The report cases' counts of reporters stay: staff's
    aggregate record of the comment. On AWS the index may list a deleted report for a second
    more: its delete again changes nothing."""
    page = list(Report.by_reporter.query(user_id, limit=PAGE))
    with Report.batch_write() as batch:
        for report in page:
            batch.delete(Report(report.comment_id, user_id))
    return "" if len(page) == PAGE else None


# --- activity lines, limits -------------------------------------------------------


@erasure_step(name="activity", order=80)
def activity_erase(*, user_id: str, cursor: str | None) -> str | None:
    """Up to 100 of the person's activity lines of the first month table (from `cursor`) still
    holding some; returns that month, or None when no table holds any. After the likes step,
    whose unlikes log lines of their own. The daily rollup's counts stay (aggregates)."""
    for month in activity_table_months():
        if cursor and month < cursor:
            continue
        model = activity_model(month)
        page = list(model.query(user_id, consistent_read=True, limit=100))
        if page:
            with model.batch_write() as batch:
                for item in page:
                    batch.delete(item)
            return month
    return None


@erasure_step(name="limits", order=90)
def limits_erase(*, user_id: str, cursor: str | None) -> str | None:
    """The account's write-limit counters of the current windows (earlier windows' items expire
    by TTL within an hour of their window's end)."""
    for name, (rules, new_rules) in settings.RATE_LIMITS.items():
        for text in {rules, new_rules} - {""}:
            limit_forget(name=name, subject=user_id, rules=text)
    return None


# --- the export ---------------------------------------------------------------------


@export_section(name="profile", order=0, single=True)
def profile_export(*, user_id: str) -> Iterator[dict[str, Any]]:
    user = get_user_model().objects.get(pk=int(user_id))
    yield {
        "id": str(user.pk),
        "username": user.username,
        "display_name": user.display_name,
        "email": user.email,
        "email_verified": user.email_verified,
        "date_joined": user.date_joined.isoformat(),
        "last_login": user.last_login.isoformat() if user.last_login else None,
    }


@export_section(name="comments", order=20)
def comments_export(*, user_id: str) -> Iterator[dict[str, Any]]:
    """Every comment the person wrote, hidden and deleted ones too, oldest first, a page at a time."""
    keys = Comment.author_index.query(user_id, page_size=EXPORT_PAGE)
    page: list[str] = []

    def read(ids: list[str]) -> Iterator[dict[str, Any]]:
        found = {item.comment_id: item for item in Comment.batch_get(ids, consistent_read=True)}
        for comment_id in ids:
            item = found.get(comment_id)
            if item is not None:
                yield {
                    "id": item.comment_id,
                    "body": item.body,
                    "parent_id": item.parent_id,
                    "created_at": item.created_at,
                    "edited_at": item.edited_at,
                    "deleted_at": item.deleted_at,
                    "hidden": bool(item.hidden),
                }

    for key in keys:
        page.append(key.comment_id)
        if len(page) == EXPORT_PAGE:
            yield from read(page)
            page = []
    if page:
        yield from read(page)


def _with_comment_texts(rows: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """Each row with the text of its comment beside its `comment_id`, a page of rows at a time."""
    page: list[dict[str, Any]] = []
    for row in rows:
        page.append(row)
        if len(page) == EXPORT_PAGE:
            texts = comment_texts(item["comment_id"] for item in page)
            yield from ({**item, "comment_text": texts[item["comment_id"]]} for item in page)
            page = []
    if page:
        texts = comment_texts(item["comment_id"] for item in page)
        yield from ({**item, "comment_text": texts[item["comment_id"]]} for item in page)


@export_section(name="likes", order=25)
def likes_export(*, user_id: str) -> Iterator[dict[str, Any]]:
    rows = ({"comment_id": like.comment_id} for like in Like.by_user.query(user_id, page_size=EXPORT_PAGE))
    yield from _with_comment_texts(rows)


@export_section(name="reactions", order=26)
def reactions_export(*, user_id: str) -> Iterator[dict[str, Any]]:
    rows = (
        {"comment_id": row.comment_id, "reaction": row.reactor_key.rpartition("#")[2]}
        for row in Reaction.by_user.query(user_id, page_size=EXPORT_PAGE)
    )
    yield from _with_comment_texts(rows)


@export_section(name="blocks_and_mutes", order=60)
def relations_export(*, user_id: str) -> Iterator[dict[str, Any]]:
    items = list(Relation.query(user_id, consistent_read=True))  # at most RELATIONS_MAX
    names = people_names(item.other_id for item in items)
    for item in items:
        yield {
            "user_id": item.other_id,
            "name": names.get(item.other_id, DELETED_ACCOUNT),
            "blocked_at": iso_time(item.blocked_at, unit="s"),
            "muted_at": iso_time(item.muted_at, unit="s"),
        }


@export_section(name="reports", order=70)
def reports_export(*, user_id: str) -> Iterator[dict[str, Any]]:
    for report in Report.by_reporter.query(user_id, page_size=EXPORT_PAGE):
        yield {"comment_id": report.comment_id, "reason": report.reason, "note": report.note, "at": report.created_at}


@export_section(name="activity", order=80)
def activity_export(*, user_id: str) -> Iterator[dict[str, Any]]:
    for month in activity_table_months():
        for item in activity_model(month).query(user_id, page_size=EXPORT_PAGE):
            at = iso_time(int(item.at_key[:13])) if item.at_key[:13].isdigit() else None
            yield {"at": at, "at_key": item.at_key, "action": item.action, "object_id": item.object_id}
