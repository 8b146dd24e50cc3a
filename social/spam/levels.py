"""Trust levels: earned by conduct, lost by upheld reports, set by hand by staff.

Levels: 0 "new" (every account starts here); 1 "member" (TRUST_MEMBER_COMMENTS visible comments,
TRUST_MEMBER_LIKES likes received on them and TRUST_MEMBER_DAYS days visited; or an account
LIMIT_NEW_ACCOUNT_DAYS old, so accounts from before levels keep what they had); 2 "regular"
(TRUST_REGULAR_COMMENTS, TRUST_REGULAR_LIKES and TRUST_REGULAR_DAYS).

An upheld report (staff hid or deleted one of the account's comments) keeps it below level 2;
TRUST_DEMOTE_REPORTS of them bring it back to level 0, whatever else it did. Staff may set a
level by hand (`manual_level`), which wins until cleared. Each level's allowances are settings
(`allowances`): links and mentions per comment, comments and likes per hour (level 0 has the
`_NEW` write limits), and whether all its comments are held.

The conduct is kept in the account's `TrustRecord` (relational): days visited are counted on
log-in and on writes (one UPDATE on the first of each day), upheld reports when staff decide
(social.moderation.signals), and the rest is read again from DynamoDB at most every
TRUST_REFRESH_SECONDS (one Query of the account's visible comments, at most what the top level
needs, and one Query per such comment for its likes). Refreshing is idempotent (it computes
from what is stored); two refreshes at once write the same answer.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import F, Q
from django.utils.translation import gettext

from project.clock import clock
from social.counters import LIKES, counter_key, counter_values
from social.models import Comment
from social.spam.models import TrustRecord

logger = logging.getLogger(__name__)

NEW, MEMBER, REGULAR = 0, 1, 2
NAMES = {NEW: "new", MEMBER: "member", REGULAR: "regular"}
TOP = REGULAR


@dataclass(frozen=True)
class Needs:
    comments: int
    likes: int
    days: int


def level_needs(level: int) -> Needs:
    """What reaching `level` (1 or 2) takes."""
    if level == MEMBER:
        return Needs(settings.TRUST_MEMBER_COMMENTS, settings.TRUST_MEMBER_LIKES, settings.TRUST_MEMBER_DAYS)
    return Needs(settings.TRUST_REGULAR_COMMENTS, settings.TRUST_REGULAR_LIKES, settings.TRUST_REGULAR_DAYS)


@dataclass(frozen=True)
class Allowances:
    links: int  # links a comment may carry before it is held
    mentions: int  # people a comment's @mentions notify, over all its edits
    hold_all: bool  # every comment of this level is held for review
    new_account_limits: bool  # the `_NEW` write limits (comments, replies, likes... per hour)


def _per_level(text: str, level: int) -> str:
    values = [part.strip() for part in text.split(",")]
    return values[min(level, len(values) - 1)]


def allowances(level: int) -> Allowances:
    """The allowances of a level, from TRUST_LINKS, TRUST_MENTIONS and TRUST_HOLD_LEVELS."""
    held = {int(part) for part in settings.TRUST_HOLD_LEVELS.split(",") if part.strip()}
    return Allowances(
        links=int(_per_level(settings.TRUST_LINKS, level)),
        mentions=int(_per_level(settings.TRUST_MENTIONS, level)),
        hold_all=level in held,
        new_account_limits=level == NEW,
    )


@dataclass(frozen=True)
class TrustView:
    level: int
    name: str
    why: str
    manual: bool
    comments: int
    likes_received: int
    days_visited: int
    upheld_reports: int
    next_level: int | None
    next_needs: Needs | None  # what the next level takes in all (None at the top)


def _now() -> datetime:
    return datetime.fromtimestamp(clock.now(), tz=UTC)


def computed_level(record: TrustRecord, *, age_days: float) -> tuple[int, str]:
    """The level `record`'s conduct earns, and why (a pure function of the record and the age)."""
    if record.upheld_reports >= settings.TRUST_DEMOTE_REPORTS:
        return NEW, f"{record.upheld_reports} upheld reports"

    def meets(level: int) -> bool:
        needs = level_needs(level)
        return (
            record.comments >= needs.comments
            and record.likes_received >= needs.likes
            and record.days_visited >= needs.days
        )

    if meets(REGULAR) and record.upheld_reports == 0:
        return REGULAR, "comments, likes and days visited of a regular"
    if meets(MEMBER):
        return MEMBER, "comments, likes and days visited of a member"
    if age_days >= settings.LIMIT_NEW_ACCOUNT_DAYS:
        return MEMBER, f"account older than {settings.LIMIT_NEW_ACCOUNT_DAYS:g} days"
    return NEW, "a new account"


def _conduct_read(user_id: str) -> tuple[int, int]:
    """(visible comments, likes received on them), counted up to what the top level needs."""
    cap = max(level_needs(REGULAR).comments, level_needs(MEMBER).comments, 1)
    ids = [
        item.comment_id for item in Comment.profile_index.query(user_id, limit=cap, attributes_to_get=["comment_id"])
    ]
    if not ids:
        return 0, 0
    counts = counter_values(keys=[counter_key(kind=LIKES, object_id=cid) for cid in ids], consistent=False)
    return len(ids), sum(counts.values())


def _record(user_id: str) -> tuple[TrustRecord, float, bool] | None:
    """The account's record (created empty if missing), its age in days and whether it is staff."""
    try:
        user = get_user_model().objects.only("date_joined", "is_staff").get(pk=int(user_id))
    except (ValueError, get_user_model().DoesNotExist):
        return None
    record, _created = TrustRecord.objects.get_or_create(user_id=user.pk)
    age_days = (clock.now() - user.date_joined.timestamp()) / 86400
    return record, age_days, bool(user.is_staff)


def trust_refresh(*, user_id: str, force: bool = False) -> TrustRecord | None:
    """The account's record with its level as of now; None for an unknown account. The conduct
    read from DynamoDB is refreshed when older than TRUST_REFRESH_SECONDS (or `force`); the level
    itself is recomputed from it at every call (a pure function, settings and age included) and
    written only when it changed. Idempotent; concurrent calls write the same answer."""
    found = _record(user_id)
    if found is None:
        return None
    record, age_days, _staff = found
    changed: list[str] = []
    stale = record.evaluated_at is None or _now() - record.evaluated_at > timedelta(
        seconds=settings.TRUST_REFRESH_SECONDS
    )
    if force or stale:
        record.comments, record.likes_received = _conduct_read(user_id)
        record.evaluated_at = _now()
        changed += ["comments", "likes_received", "evaluated_at"]
    level, why = computed_level(record, age_days=age_days)
    if record.manual_level is not None:
        level, why = record.manual_level, f"set by {record.manual_by or 'staff'}: {record.manual_note}".strip(": ")
    if (level, why) != (record.level, record.why):
        logger.info("user %s: trust level %s -> %s (%s)", user_id, record.level, level, why)
        record.level, record.why = level, why
        changed += ["level", "why"]
    if changed:
        record.save(update_fields=changed)
    return record


def trust_level(*, user_id: str) -> int:
    """The account's level (refreshed when stale); an unknown account is new."""
    record = trust_refresh(user_id=user_id)
    return NEW if record is None else int(record.level)


def trust_visit(*, user_id: str) -> None:
    """Count today as a day the account visited: one UPDATE that changes nothing after the first
    of the day (its condition), so twice or concurrently it counts once."""
    today = _now().date()
    try:
        pk = int(user_id)
    except ValueError:
        return
    updated = TrustRecord.objects.filter(Q(user_id=pk) & (Q(last_visit_day__lt=today) | Q(last_visit_day=None))).update(
        days_visited=F("days_visited") + 1, last_visit_day=today
    )
    if (
        not updated
        and not TrustRecord.objects.filter(user_id=pk).exists()
        and get_user_model().objects.filter(pk=pk).exists()
    ):
        TrustRecord.objects.get_or_create(user_id=pk, defaults={"days_visited": 1, "last_visit_day": today})


def trust_report_upheld(*, author_id: str) -> None:
    """Staff hid or deleted one of the author's comments: count it and recompute the level at once."""
    try:
        pk = int(author_id)
    except ValueError:
        return
    if not get_user_model().objects.filter(pk=pk).exists():
        return
    TrustRecord.objects.get_or_create(user_id=pk)
    TrustRecord.objects.filter(user_id=pk).update(upheld_reports=F("upheld_reports") + 1)
    trust_refresh(user_id=author_id, force=True)


def trust_set(*, user_id: str, level: int | None, staff_username: str, note: str = "") -> TrustRecord:
    """Set (or with None clear) the account's level by hand. Idempotent: twice, the same state."""
    found = _record(user_id)
    if found is None:
        from project.errors import NotFound

        raise NotFound(gettext("No such user."))
    record = found[0]
    record.manual_level = level
    record.manual_by = staff_username if level is not None else ""
    record.manual_note = note[:300] if level is not None else ""
    record.save(update_fields=["manual_level", "manual_by", "manual_note"])
    refreshed = trust_refresh(user_id=user_id, force=True)
    assert refreshed is not None
    return refreshed


def trust_view(*, user_id: str) -> TrustView:
    """The account's level, why, its conduct and what the next level needs (GET /api/me/)."""
    record = trust_refresh(user_id=user_id)
    if record is None:
        record = TrustRecord()
    level = int(record.level)
    next_level = level + 1 if level < TOP else None
    return TrustView(
        level=level,
        name=NAMES.get(level, str(level)),
        why=record.why,
        manual=record.manual_level is not None,
        comments=record.comments,
        likes_received=record.likes_received,
        days_visited=record.days_visited,
        upheld_reports=record.upheld_reports,
        next_level=next_level,
        next_needs=level_needs(next_level) if next_level is not None else None,
    )


def trust_on_login(sender, request, user, **kwargs) -> None:
    """`user_logged_in` receiver: a log-in counts today as a day visited."""
    trust_visit(user_id=str(user.pk))


def trust_on_decision(sender, *, author_id: str, decision: str, by: str, **kwargs) -> None:
    """`moderation_decided` receiver: staff hiding or deleting a comment upholds its reports."""
    if by == "staff" and decision in ("hide", "delete"):
        trust_report_upheld(author_id=author_id)
