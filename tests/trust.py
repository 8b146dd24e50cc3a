"""Trust levels in tests: an account that behaves as an established one (ordinary allowances).

Age earns no level (social/spam/levels.py), so a test that needs an account with the ordinary
limits and allowances says so: `established(user)` sets its level by hand, as staff would.
"""

from social.spam.levels import MEMBER, trust_set


def established(user, level: int = MEMBER):
    """`user` at `level` (a member by default), set by hand; returns the user."""
    trust_set(user_id=str(user.pk), level=level, staff_username="fixture", note="established account")
    return user
