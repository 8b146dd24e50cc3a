"""A deleted account's preferences and muted / watched threads are forgotten.

The DynamoDB deletes run once the account's deletion has committed (`transaction.on_commit`):
a deletion rolled back forgets nothing. If the process dies between the commit and the
deletes, the items stay: they name an account nobody can sign in to, and a watch of it only
queues feed entries nobody reads.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver

from notifications.preferences import services


@receiver(post_delete, sender=get_user_model(), dispatch_uid="preferences_forget_for_user")
def forget_preferences_of_deleted_user(sender: object, instance: Any, **kwargs: object) -> None:
    user_id = str(instance.pk)
    transaction.on_commit(lambda: services.preferences_forget(user_id=user_id))
