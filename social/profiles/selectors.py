"""Who a profile page is about: an account found by its name (its comments: social.selectors.profile_comments)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth import get_user_model

from project.errors import NotFound


@dataclass(frozen=True)
class Profile:
    id: str
    username: str
    display_name: str
    date_joined: datetime


def profile_get(*, username: str) -> Profile:
    """The public face of an account, found by username in any case; NotFound if none."""
    user = get_user_model().objects.filter(username__iexact=username, is_active=True).first()
    if user is None:
        raise NotFound("No such person.")
    return Profile(str(user.pk), user.username, user.shown_name, user.date_joined)
