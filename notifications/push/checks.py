"""Whether a push may still go, checked at send time with what e-mail checks
(notifications/mail/checks.py): an active account, the kind's push still on, the entry still
unread, the thread not muted, not only from people the reader blocked or muted, and not in the
reader's quiet hours (no push then; the e-mail of what stays unread comes when they end). Every read
strongly consistent; whatever changed since the push was scheduled wins."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth import get_user_model

from notifications.mail.checks import READ_BEFORE, RETRACTED, About, about_unread_or_why, recipient_of, thread_muted
from notifications.mail.quiet import quiet_until
from notifications.preferences.selectors import preferences_get
from project.clock import clock
from social.relations.selectors import silenced_ids

# The reasons a push is skipped (the ledger's `reason`, the notification log's words).
NO_ACCOUNT = "no active account"
PREFERENCE_OFF = "preference off"
READ = READ_BEFORE
GONE = RETRACTED
MUTED_THREAD = "thread muted"
SILENCED = "person blocked or muted"
NO_DEVICE = "no subscribed browser"
EXPIRED = "expired before it could go (TTL)"
PRESENT = "present in a tab"
QUIET_HOURS = "quiet hours"


@dataclass(frozen=True)
class PushVerdict:
    about: About | None = None
    skip: str = ""


def account_of(user_id: str) -> Any:
    """The person's account (None when there is none): one SQL query."""
    try:
        return get_user_model().objects.filter(pk=int(user_id)).first()
    except ValueError:
        return None


def accounts_of(user_ids: Iterable[str]) -> dict[str, Any]:
    """The accounts of `user_ids` by id (those that exist): one SQL query for a sender's batch."""
    ids = [int(user_id) for user_id in set(user_ids) if user_id.isdigit()]
    return {str(user.pk): user for user in get_user_model().objects.filter(pk__in=ids)} if ids else {}


READ_HERE: Any = object()  # push_verdict's `account` when the caller read none


def push_verdict(*, user_id: str, kind: str, entry_id: str, account: Any = READ_HERE) -> PushVerdict:
    """Whether the push about `entry_id` may go to `user_id` now, and what it says. `account`:
    the person's account (None: there is none) as the caller read it moments ago (a sender
    reads its batch's at once, in its own thread: the threads that send touch DynamoDB only);
    by default it is read here."""
    user = account_of(user_id) if account is READ_HERE else account
    if user is None or not user.is_active:
        return PushVerdict(skip=NO_ACCOUNT)
    if not preferences_get(user_id=user_id, consistent=True).wants(kind, "push"):
        return PushVerdict(skip=f"{PREFERENCE_OFF}: push for {kind}")
    if quiet_until(recipient=recipient_of(user), now=clock.utcnow()) is not None:
        return PushVerdict(skip=QUIET_HOURS)
    about = about_unread_or_why(user_id=user_id, kind=kind, entry_id=entry_id)
    if not isinstance(about, About):
        return PushVerdict(skip=about)  # READ or GONE
    if thread_muted(user_id=user_id, comment_id=about.comment_id):
        return PushVerdict(skip=MUTED_THREAD)
    if about.actor_ids and set(about.actor_ids) <= silenced_ids(user_id=user_id):
        return PushVerdict(skip=SILENCED)
    return PushVerdict(about=about)
