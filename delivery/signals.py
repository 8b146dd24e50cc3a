"""A deleted account receives nothing more: its pending delivery targets are dropped."""

from __future__ import annotations

import logging

from django.contrib.auth import get_user_model
from django.db.models.signals import post_delete
from django.dispatch import receiver

from delivery import services

logger = logging.getLogger(__name__)


@receiver(post_delete, sender=get_user_model(), dispatch_uid="delivery_targets_drop_for_user")
def drop_targets_of_deleted_user(sender, instance, **kwargs):
    services.delivery_targets_drop_for_user(user_id=str(instance.pk))
