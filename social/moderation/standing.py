"""Who counts toward hiding a comment, and how many it takes: the reporter's and the author's standing.

A reporter has standing when their address is verified, their account is at least
REPORT_STANDING_DAYS old and they have at least REPORT_STANDING_COMMENTS visible comments; a
report without it weighs 0 (recorded and shown to staff, never toward a hide). The hide
threshold is REPORT_HIDE_THRESHOLD plus one person per REPORT_THRESHOLD_STEP_DAYS of the
author's account age; staff and authors of REPORT_PROTECTED_AUTHOR_DAYS or more are never
hidden by reports (their case waits in the queue for staff). Trust levels (social.spam.levels)
weigh in too: a reporter at the lowest level weighs 0, a regular TRUST_REGULAR_REPORT_WEIGHT; a
regular author's threshold is TRUST_REGULAR_PROTECTION people higher. Reads: the user row (one
query each), the trust record, and for the reporter one Query of at most REPORT_STANDING_COMMENTS
index keys.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth import get_user_model

from project.clock import clock
from social.models import Comment

FULL_WEIGHT = 100  # a report's weight and the threshold are in hundredths of a person
DAY = 86400.0


def _account(user_id: str) -> tuple[float, bool, bool] | None:
    """(age in days, email verified, staff) of an account, or None when it is unknown."""
    try:
        user = get_user_model().objects.only("date_joined", "email_verified", "is_staff").get(pk=int(user_id))
    except (ValueError, get_user_model().DoesNotExist):
        return None
    return (clock.now() - user.date_joined.timestamp()) / DAY, bool(user.email_verified), bool(user.is_staff)


def reporter_has_standing(*, reporter_id: str) -> bool:
    """Verified address, old enough, and enough visible comments (see the module's docstring)."""
    account = _account(reporter_id)
    if account is None:
        return False
    age_days, verified, _staff = account
    min_days: float = settings.REPORT_STANDING_DAYS
    if not verified or age_days < min_days:
        return False
    needed: int = settings.REPORT_STANDING_COMMENTS
    if needed <= 0:
        return True
    written = Comment.profile_index.query(reporter_id, limit=needed, attributes_to_get=["comment_id"])
    return sum(1 for _ in written) >= needed


def report_weight(*, reporter_id: str) -> int:
    """A report's weight in hundredths: 0 without standing or at the lowest trust level (social.spam.levels),
    100 from a member, TRUST_REGULAR_REPORT_WEIGHT from a regular."""
    from social.spam.levels import MEMBER, REGULAR, trust_level

    if not reporter_has_standing(reporter_id=reporter_id):
        return 0
    level = trust_level(user_id=reporter_id)
    if level < MEMBER:
        return 0
    regular: int = settings.TRUST_REGULAR_REPORT_WEIGHT
    return max(FULL_WEIGHT, regular) if level >= REGULAR else FULL_WEIGHT


def hide_threshold(*, author_id: str) -> int | None:
    """How much weight (hundredths) hides this author's comment, or None: reports never hide it."""
    base: int = settings.REPORT_HIDE_THRESHOLD
    account = _account(author_id)
    if account is None:
        return base * FULL_WEIGHT
    age_days, _verified, staff = account
    protected_days: float = settings.REPORT_PROTECTED_AUTHOR_DAYS
    if staff or age_days >= protected_days:
        return None
    step: float = settings.REPORT_THRESHOLD_STEP_DAYS
    extra = int(age_days // step) if step > 0 else 0
    from social.spam.levels import REGULAR, trust_level

    if trust_level(user_id=author_id) >= REGULAR:
        extra += int(settings.TRUST_REGULAR_PROTECTION)
    return (base + extra) * FULL_WEIGHT
