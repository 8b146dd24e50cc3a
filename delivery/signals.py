"""A deleted account receives nothing more: its pending delivery targets are dropped.

The DynamoDB write runs once the deletion has committed (`transaction.on_commit`): a
deletion that is rolled back drops nothing, so a live account never loses its messages.
If the process dies between the commit and the drop, the targets stay pending and the
message lands in the feed of an account nobody can sign in to any more.
"""

from __future__ import annotations

import logging
from typing import Any

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver

from delivery import services

logger = logging.getLogger(__name__)


@receiver(post_delete, sender=get_user_model(), dispatch_uid="delivery_targets_drop_for_user")
def drop_targets_of_deleted_user(sender: object, instance: Any, **kwargs: object) -> None:
    user_id = str(instance.pk)
    transaction.on_commit(lambda: services.delivery_targets_drop_for_user(user_id=user_id))
