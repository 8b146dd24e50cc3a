"""Logging out removes the push subscriptions made in that session: a shared computer stops
showing the person's notifications once they log out."""

from __future__ import annotations

import logging
from typing import Any

from notifications.push.apis import SESSION_KEY
from notifications.push.services import subscription_remove

logger = logging.getLogger(__name__)


def push_logged_out(sender: Any, request: Any, user: Any, **kwargs: Any) -> None:
    """Receiver of `user_logged_out`: delete the session's subscriptions (each one DeleteItem;
    gone already: nothing). A failure is logged, never stops the log-out: the service worker
    also unsubscribes the browser itself on the log-out page."""
    if user is None or request is None:
        return
    for subscription_id in request.session.get(SESSION_KEY, []):
        try:
            subscription_remove(user_id=str(user.pk), subscription_id=str(subscription_id))
        except Exception:
            logger.warning("push subscription %s of user %s not removed at log-out", subscription_id, user.pk)
