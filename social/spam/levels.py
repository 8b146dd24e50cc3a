"""Trust levels: earned by conduct, lost by upheld reports, set by hand by staff.

Levels: 0 "new" (every account starts here, whatever its age); 1 "member" (TRUST_MEMBER_COMMENTS
visible comments, TRUST_MEMBER_LIKES likes received on them from established accounts and
TRUST_MEMBER_DAYS days visited); 2 "regular" (TRUST_REGULAR_COMMENTS, TRUST_REGULAR_LIKES and
TRUST_REGULAR_DAYS). Age alone earns nothing. A like counts only from an established account:
one at level 1 or above (as last computed) or staff, never the author's own; so new accounts
cannot promote each other.

An upheld report (staff hid or deleted one of the account's comments) keeps it below level 2;
TRUST_DEMOTE_REPORTS of them bring it back to level 0, whatever else it did. Staff may set a
level by hand (`manual_level`), which wins until cleared. Each level's allowances are settings
(`allowances`): links and mentions per comment, comments and likes per hour (level 0 has the
`_NEW` write limits), and whether all its comments are held.

The conduct is kept in the account's `TrustRecord` (relational): days visited are the days the
person was seen logged in (any page or API request, a log-in or a write: `trust_visit`, at most
one UPDATE per person per day and process, and one row write per person per day), upheld
reports when staff decide (social.moderation.signals), and the rest is read again from DynamoDB
at most every TRUST_REFRESH_SECONDS (one Query of the account's visible comments, at most what
the top level needs, one Query per such comment for its likers, at most LIKERS_READ each, and
one SELECT of which likers are established). Refreshing is idempotent (it computes from what is
stored); two refreshes at once write the same answer.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.db.models import F, Q
from django.utils.translation import gettext

from project.clock import clock
from social.models import Comment, Like
from social.spam.models import TrustRecord

logger = logging.getLogger(__name__)

NEW, MEMBER, REGULAR = 0, 1, 2
NAMES = {NEW: "new", MEMBER: "member", REGULAR: "regular"}
TOP = REGULAR
LIKERS_READ = 200  # likers read per comment when counting the likes an account received


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


def computed_level(record: TrustRecord) -> tuple[int, str]:
    """The level `record`'s conduct earns, and why (a pure function of the record: age alone earns nothing)."""
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
    return NEW, "a new account"


def _conduct_read(user_id: str) -> tuple[int, int]:
    """(visible comments, likes received on them from established accounts), the comments counted
    up to what the top level needs."""
    cap = max(level_needs(REGULAR).comments, level_needs(MEMBER).comments, 1)
    ids = [
        item.comment_id for item in Comment.profile_index.query(user_id, limit=cap, attributes_to_get=["comment_id"])
    ]
    likers: list[str] = []
    for comment_id in ids:
        likers += [
            like.user_id
            for like in Like.query(comment_id, limit=LIKERS_READ, attributes_to_get=["user_id"])
            if like.user_id != user_id
        ]
    established = established_among(likers)
    return len(ids), sum(1 for liker in likers if liker in established)


def established_among(user_ids: list[str]) -> set[str]:
    """Those of `user_ids` that are established: staff, or above the lowest level as last
    computed (their stored level; reading it computes nothing, so counting never recurses)."""
    pks = {int(uid) for uid in user_ids if uid.isdigit()}
    if not pks:
        return set()
    by_level = TrustRecord.objects.filter(user_id__in=pks, level__gt=NEW).values_list("user_id", flat=True)
    staff = get_user_model().objects.filter(pk__in=pks, is_staff=True).values_list("pk", flat=True)
    return {str(pk) for pk in (*by_level, *staff)}


def _record(user_id: str) -> TrustRecord | None:
    """The account's record (created empty if missing); None for an unknown account."""
    try:
        user = get_user_model().objects.only("pk").get(pk=int(user_id))
    except (ValueError, get_user_model().DoesNotExist):
        return None
    record, _created = TrustRecord.objects.get_or_create(user_id=user.pk)
    return record


def trust_refresh(*, user_id: str, force: bool = False) -> TrustRecord | None:
    """The account's record with its level as of now; None for an unknown account. The conduct
    read from DynamoDB is refreshed when older than TRUST_REFRESH_SECONDS (or `force`); the level
    itself is recomputed from it at every call (a pure function, settings included) and
    written only when it changed. Idempotent; concurrent calls write the same answer."""
    record = _record(user_id)
    if record is None:
        return None
    changed: list[str] = []
    stale = record.evaluated_at is None or _now() - record.evaluated_at > timedelta(
        seconds=settings.TRUST_REFRESH_SECONDS
    )
    if force or stale:
        record.comments, record.likes_received = _conduct_read(user_id)
        record.evaluated_at = _now()
        changed += ["comments", "likes_received", "evaluated_at"]
    level, why = computed_level(record)
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
    """Count today as a day the account visited. Each process remembers (in its cache) whom it
    counted today and asks the database once per person a day: one UPDATE conditioned on the
    last day counted, which writes no row after the first of the day, so twice, concurrently or
    from several processes it counts once. Dying half way: at worst the day is asked again."""
    today = _now().date()
    try:
        pk = int(user_id)
    except ValueError:
        return
    seen = f"trust-visit:{pk}:{today.isoformat()}"
    if cache.get(seen):
        return
    counted = Q(user_id=pk) & (Q(last_visit_day__lt=today) | Q(last_visit_day=None))
    updated = TrustRecord.objects.filter(counted).update(days_visited=F("days_visited") + 1, last_visit_day=today)
    if not updated and not TrustRecord.objects.filter(user_id=pk).exists():
        if not get_user_model().objects.filter(pk=pk).exists():
            return
        # No record yet: create it, then count (a record made meanwhile by another is counted once).
        TrustRecord.objects.get_or_create(user_id=pk)
        TrustRecord.objects.filter(counted).update(days_visited=F("days_visited") + 1, last_visit_day=today)
    cache.set(seen, True, timeout=86400)


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
    record = _record(user_id)
    if record is None:
        from project.errors import NotFound

        raise NotFound(gettext("No such user."))
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


def trust_on_decision(sender, *, author_id: str, decision: str, by: str, **kwargs) -> None:
    """`moderation_decided` receiver: staff hiding or deleting a comment upholds its reports."""
    if by == "staff" and decision in ("hide", "delete"):
        trust_report_upheld(author_id=author_id)
