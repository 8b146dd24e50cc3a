"""Reads of people's push subscriptions (writes: notifications/push/services.py)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from urllib.parse import urlsplit

from notifications.models import PushSubscription


@dataclass(frozen=True)
class SubscriptionView:
    id: str
    device: str
    endpoint_host: str
    created_at: datetime
    last_used_at: datetime | None


def endpoint_host(endpoint: str) -> str:
    """The push service's host name of an endpoint (lower case; "" when it has none)."""
    try:
        return (urlsplit(endpoint).hostname or "").lower()
    except ValueError:
        return ""


def _at(ms: int) -> datetime | None:
    return datetime.fromtimestamp(ms / 1000, UTC) if ms else None


def subscriptions_of(*, user_id: str) -> list[PushSubscription]:
    """A person's subscriptions: one strongly consistent Query (bounded by PUSH_SUBSCRIPTIONS_MAX)."""
    return list(PushSubscription.query(user_id, consistent_read=True))


def subscription_view(item: PushSubscription) -> SubscriptionView:
    return SubscriptionView(
        id=item.subscription_id,
        device=item.device,
        endpoint_host=endpoint_host(item.endpoint),
        created_at=_at(int(item.created_at)) or datetime.fromtimestamp(0, UTC),
        last_used_at=_at(int(item.last_used_at or 0)),
    )


def subscriptions_shown(*, user_id: str) -> list[SubscriptionView]:
    """The person's devices as the API and the settings page list them, newest first."""
    views = [subscription_view(item) for item in subscriptions_of(user_id=user_id)]
    return sorted(views, key=lambda view: view.created_at, reverse=True)
