"""Removing a spammer ("delete as spam", staff): the account stops at once and everything it
caused is taken back, by the account deletion's own eraser.

`account_remove_as_spam` does, in order:
1. one database transaction: the account can no longer log in (inactive, an unusable password,
   its API tokens deleted) and a deletion request is recorded (`AccountDeletion`), dated so that
   the eraser (`erase_accounts`) takes it at its next pass, not after ACCOUNT_DELETION_DELAY_SECONDS;
   from this moment every page names the account "deleted account";
2. its held comments deleted, and its visible comments hidden at once (up to SPAM_HIDE_AT_ONCE,
   newest first; the eraser empties every one of them, as for any deleted account);
3. every report it made dismissed: taken out of its case's open counts and weight (it no
   longer counts toward a hide), the report items deleted by the eraser;
4. then the eraser, within its next pass, does exactly what an account deletion does: every
   comment emptied, every like undone (counts and like notifications retracted), every feed
   entry, mention and reply notification it caused retracted, its unsent mail dropped.

One line of the moderation audit log (`spam`, written `pending` first). Twice: the same
request (the user id is unique), nothing hidden or dismissed twice (each write is conditional
or idempotent). Dies half way: the account is stopped or not (one transaction); running it again
finishes the rest.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.db import transaction as db_transaction
from django.utils.translation import gettext
from pynamodb.exceptions import UpdateError
from rest_framework.authtoken.models import Token

from project.clock import clock
from project.errors import NotFound, PermissionDenied, condition_failed
from social.models import AccountDeletion, Comment, Report, ReportCase
from social.moderation.services import OPEN
from social.moderation.staff_services import staff_audited
from social.services import comment_set_hidden
from social.spam.held import held_comment_delete

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser

logger = logging.getLogger(__name__)

SPAM_HIDE_AT_ONCE = 200  # visible comments hidden in the request; the eraser empties them all anyway


def account_remove_as_spam(*, user_id: str, staff: AbstractBaseUser | AnonymousUser, source: str = "admin") -> int:
    """Delete an account as spam (see the module's docstring). Returns how many of its comments
    were hidden or deleted at once. Staff accounts are refused (PermissionDenied)."""
    audit = {"target_type": "user", "target_id": user_id, "detail": "delete as spam", "source": source}
    with staff_audited(staff=staff, action="spam", **audit):
        try:
            user = get_user_model().objects.get(pk=int(user_id))
        except (ValueError, get_user_model().DoesNotExist):
            raise NotFound(gettext("No such user.")) from None
        if user.is_staff or user.is_superuser:
            raise PermissionDenied(gettext("Staff accounts are not deleted as spam."))
        now = datetime.fromtimestamp(clock.now(), tz=UTC)
        # Due at once: the account stops in this transaction. (A write of a request still in flight
        # that lands after the eraser's pass, within a second, stays for staff to delete by hand.)
        ripe = now - timedelta(seconds=settings.ACCOUNT_DELETION_DELAY_SECONDS)
        with db_transaction.atomic():
            get_user_model().objects.filter(pk=user.pk).update(is_active=False, password=make_password(None))
            Token.objects.filter(user_id=user.pk).delete()
            AccountDeletion.objects.get_or_create(user_id=user.pk, defaults={"requested_at": ripe})
        removed = _comments_take_down(user_id)
        dismissed = reports_dismiss(reporter_id=user_id)
    logger.warning("user %s deleted as spam: %d comments taken down, %d reports dismissed", user_id, removed, dismissed)
    return removed


def _comments_take_down(user_id: str) -> int:
    """Its held comments deleted, its visible ones hidden (newest first, up to SPAM_HIDE_AT_ONCE)."""
    done = 0
    for key in Comment.author_index.query(user_id, scan_index_forward=False, limit=SPAM_HIDE_AT_ONCE):
        comment = Comment.get(key.comment_id, consistent_read=True)
        if comment.hidden_by == "held":
            done += held_comment_delete(comment=comment)
        elif not comment.hidden and not comment.deleted_at:
            comment_set_hidden(comment_id=comment.comment_id, hidden=True, hidden_by="staff")
            done += 1
    return done


DISMISSED = "[dismissed]"  # the start of a dismissed report's note


def reports_dismiss(*, reporter_id: str) -> int:
    """Take the reporter's reports out of their open cases: each report is marked dismissed (its
    note prefixed, on condition it was not), then its case, if still open, counts one open
    reporter and the report's weight less. The mark comes first, so no report is subtracted twice
    however often this runs; dying between the two leaves that report counted. Returns how many
    this call dismissed."""
    dismissed = 0
    for key in Report.by_reporter.query(reporter_id):
        report = Report.get(key.comment_id, reporter_id, consistent_read=True)
        try:
            report.update(
                actions=[Report.note.set(f"{DISMISSED} {report.note or ''}".strip())],
                condition=Report.note.does_not_exist() | ~Report.note.startswith(DISMISSED),
            )
        except UpdateError as error:
            if not condition_failed(error):
                raise
            continue  # dismissed already
        try:
            ReportCase(report.comment_id).update(
                actions=[ReportCase.open_reporters.add(-1), ReportCase.score.add(-int(report.weight))],
                condition=(ReportCase.status == OPEN) & (ReportCase.open_reporters > 0),
            )
        except UpdateError as error:
            if not condition_failed(error):
                raise
        dismissed += 1
    return dismissed
