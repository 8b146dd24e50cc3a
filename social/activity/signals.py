"""Log sign-ups and log-ins (relational actions, so at most once: see services)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.signals import user_logged_in
from django.db import transaction
from django.db.models.signals import post_save

from social.activity.models import LOGIN, SIGNUP
from social.activity.services import activity_record


def _on_login(sender: object, request: object, user: Any, **kwargs: object) -> None:
    activity_record(user_id=str(user.pk), action=LOGIN)


def _on_user_saved(sender: object, instance: Any, created: bool, raw: bool = False, **kwargs: object) -> None:
    if created and not raw:
        # After the commit: a sign-up rolled back is not in the log.
        transaction.on_commit(lambda: activity_record(user_id=str(instance.pk), action=SIGNUP))


def connect() -> None:
    user_logged_in.connect(_on_login, dispatch_uid="activity-login")
    post_save.connect(_on_user_saved, sender=get_user_model(), dispatch_uid="activity-signup")
