"""A deleted account's preferences and muted / watched threads are forgotten; a digest reader who
changed their time zone or digest hour is listed under their new slot of the `digest` index.

The DynamoDB deletes run once the account's deletion has committed (`transaction.on_commit`):
a deletion rolled back forgets nothing. If the process dies between the commit and the
deletes, the items stay: they name an account nobody can sign in to, and a watch of it only
queues feed entries nobody reads.
"""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from notifications.preferences import services

logger = logging.getLogger(__name__)


@receiver(post_delete, sender=get_user_model(), dispatch_uid="preferences_forget_for_user")
def forget_preferences_of_deleted_user(sender: object, instance: Any, **kwargs: object) -> None:
    user_id = str(instance.pk)
    transaction.on_commit(lambda: services.preferences_forget(user_id=user_id))


SLOT_FIELDS = frozenset({"time_zone", "digest_hour"})


@receiver(post_save, sender=get_user_model(), dispatch_uid="digest_slot_follow_user")
def follow_digest_slot(
    sender: object, instance: Any, update_fields: frozenset[str] | None = None, **kwargs: object
) -> None:
    """Once a save naming the zone or digest hour has committed (the settings page and
    `PATCH /api/me/` name their columns): the reader's slot follows. A failure is logged and
    left to the digest pass that reads every slot (it lists readers where they belong)."""
    if not update_fields or not SLOT_FIELDS & set(update_fields):
        return
    user_id = str(instance.pk)

    def follow() -> None:
        try:
            services.digest_slot_follow(user_id=user_id)
        except Exception:
            logger.exception("digest slot of user %s not moved: the full digest pass will", user_id)

    transaction.on_commit(follow)
