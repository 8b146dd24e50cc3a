"""The inbox notice telling an account's owner that someone failed to log in to it.

project.identity.login_limits sends `login_failures_noticed` (at most once per LOGIN_NOTICE_HOURS
per account); this writes it into the owner's feed as a `notice` entry with its text
inline (it points at nothing else), kept as a kind of text and its counts
(notifications/feed/notice_texts.py), worded in the owner's language when read.
"""

from __future__ import annotations

import logging

from django.utils.translation import gettext_noop

from notifications.feed.events import FeedEvent
from notifications.feed.notice_texts import notice_body
from notifications.feed.services import feed_append
from project.clock import clock

logger = logging.getLogger(__name__)

NOTICE_TITLE = gettext_noop("Someone tried to log in to your account")


def login_failures_notice(*, user_id: str, failures: int, addresses: int = 1, **_signal: object) -> None:
    """Put the notice into the owner's feed (the signal's receiver).

    Twice: two notices (the sender's once-per-window mark keeps it to one). A feed
    that is busy queues it for `process_feed_retries`; any other failure is logged and
    never fails the log-in that caused it.
    """
    event = FeedEvent(
        event_id=f"login-failures:{user_id}:{clock.now_ms()}",
        kind="notice",
        actor_id=None,
        rollup_key=None,
        title=NOTICE_TITLE,
        body=notice_body("login-failures", failures=failures, addresses=addresses),
    )
    try:
        feed_append(user_id=user_id, event=event)
    except Exception:
        logger.exception("failed log-in notice for user %s not written", user_id)
