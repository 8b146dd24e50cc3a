"""Staff decisions on comments and their authors, each one a line of the audit log.

Every action here (hide, unhide, resolve, delete, suspend, unsuspend) goes through `_audited`:
the `ModerationAction` line is inserted as `pending` before the action, and marked `done` (or
`failed`, with the error) after it. So no staff action goes unrecorded: a process that dies
between the line and the action leaves a `pending` line, which the audit list shows as
unconfirmed (the action may or may not have happened; each action is idempotent, so doing it
again settles it). The DynamoDB side of a decision is the comment's write, then the case's
close (`case_close`); a death between the two leaves the case in the queue, and the next
decision closes it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.db import transaction as db_transaction
from django.utils.translation import gettext
from pynamodb.exceptions import UpdateError
from rest_framework.authtoken.models import Token

from project.clock import clock
from project.dynamo.transactions import write_retrying
from project.errors import ApplicationError, NotFound, PermissionDenied, condition_failed
from social.edit_history import comment_versions_erase
from social.models import Comment, ModerationAction, ReportCase, User
from social.moderation.services import CLOSED
from social.moderation.signals import decision_promise, moderation_decided, unhides_before
from social.selectors import comment_find
from social.services import comment_set_hidden

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
    from pynamodb.expressions.update import Action

logger = logging.getLogger(__name__)


@contextmanager
def _audited(
    *, staff: AbstractBaseUser | AnonymousUser, action: str, target_type: str, target_id: str, detail: str, source: str
) -> Iterator[ModerationAction]:
    line = ModerationAction.objects.create(
        staff=staff if isinstance(staff, User) else None,
        staff_username=getattr(staff, "username", "") or "",
        action=action,
        target_type=target_type,
        target_id=target_id[:64],
        detail=detail,
        source=source,
        outcome="pending",
    )
    try:
        yield line
    except Exception as error:
        line.outcome = "failed"
        line.detail = f"{line.detail} (failed: {getattr(error, 'message', None) or type(error).__name__})".strip()
        line.save(update_fields=["outcome", "detail"])
        raise
    line.outcome = "done"
    line.save(update_fields=["outcome", "detail"])


def case_close(*, comment_id: str, decision: str, staff_username: str, keep_visible: bool = False) -> bool:
    """Close the comment's report case, if it has one: out of the open queue (the sparse
    indexes lose it), its open count and score back to 0, the decision recorded; with
    `keep_visible`, reports never hide it again (staff decided it stays).

    One UpdateItem on condition the case exists (a comment never reported gets none); twice:
    the same state. A report landing just before is absorbed by the decision (its reporter is
    listed on the case); one landing after reopens the case. Returns whether a case was closed.
    """
    actions: list[Action] = [
        ReportCase.status.set(CLOSED),
        ReportCase.queue.remove(),
        ReportCase.newest_key.remove(),
        ReportCase.open_reporters.set(0),
        ReportCase.score.set(0),
        ReportCase.decision.set(decision),
        ReportCase.decided_by.set(staff_username),
        ReportCase.decided_at.set(clock.now_iso()),
    ]
    if keep_visible:
        actions.append(ReportCase.staff_kept.set(True))
    try:
        write_retrying(
            lambda: ReportCase(comment_id).update(actions=actions, condition=ReportCase.comment_id.exists()),
            what="case_close",
        )
    except UpdateError as error:
        if not condition_failed(error):
            raise
        return False
    return True


def _comment_or_404(comment_id: str) -> Comment:
    comment = comment_find(comment_id=comment_id)
    if comment is None:
        raise NotFound(gettext("No such comment."))
    return comment


def _username(staff: AbstractBaseUser | AnonymousUser) -> str:
    return getattr(staff, "username", "") or ""


def comment_hide_by_staff(
    *, comment_id: str, staff: AbstractBaseUser | AnonymousUser, source: str = "admin", note: str = ""
) -> Comment:
    """Hide a comment (staff): out of every listing, its case closed, its author and reporters
    told (`_decided`). Idempotent: twice, the same state and the same notices, written once."""
    with _audited(
        staff=staff, action="hide", target_type="comment", target_id=comment_id, detail=note, source=source
    ) as line:
        author_id = _comment_or_404(comment_id).author_id
        episode = unhides_before(comment_id=comment_id, exclude_id=line.pk)
        _promise(comment_id=comment_id, author_id=author_id, decision="hide", episode=episode)
        comment = comment_set_hidden(comment_id=comment_id, hidden=True, hidden_by="staff")
        case_close(comment_id=comment_id, decision="hide", staff_username=_username(staff))
    _decided(comment=comment, decision="hide", episode=episode)
    return comment


def _promise(*, comment_id: str, author_id: str, decision: str, episode: int) -> None:
    """Record the promise to tell of the decision before making it (social.moderation.signals):
    a crash after the decision's writes leaves the notices to `process_feed_retries`."""
    decision_promise(comment_id=comment_id, author_id=author_id, decision=decision, by="staff", episode=episode)


def _decided(*, comment: Comment, decision: str, episode: int) -> None:
    """Tell the comment's author and its reporters of a staff decision (social.moderation.signals),
    after the decision committed. Never raises: a receiver's failure is logged, the decision stands."""
    for _receiver, result in moderation_decided.send_robust(
        sender=Comment,
        comment_id=comment.comment_id,
        author_id=comment.author_id,
        decision=decision,
        by="staff",
        episode=episode,
    ):
        if isinstance(result, Exception):
            logger.error("moderation notice of %s on %s failed: %r", decision, comment.comment_id, result)


def comment_unhide_by_staff(
    *, comment_id: str, staff: AbstractBaseUser | AnonymousUser, source: str = "admin", note: str = ""
) -> Comment:
    """Show a hidden comment again (staff): back in its listings, its case closed as kept, so
    reports never hide it again. Idempotent."""
    with _audited(
        staff=staff, action="unhide", target_type="comment", target_id=comment_id, detail=note, source=source
    ) as line:
        found = _comment_or_404(comment_id)
        if found.hidden_by == "held":
            # Shown this way it would notify nobody it mentions or replies to: approval does.
            raise ApplicationError(gettext("This comment is waiting for review: approve it in Held comments."))
        was_hidden = found.hidden
        earlier = unhides_before(comment_id=comment_id, exclude_id=line.pk)
        # This unhide's notice is number `earlier`; a retry (found visible) names the last one again.
        episode = earlier if was_hidden else earlier - 1
        if was_hidden or earlier:
            _promise(comment_id=comment_id, author_id=found.author_id, decision="unhide", episode=episode)
        comment = comment_set_hidden(comment_id=comment_id, hidden=False)
        case_close(comment_id=comment_id, decision="unhide", staff_username=_username(staff), keep_visible=True)
    if was_hidden or earlier:
        _decided(comment=comment, decision="unhide", episode=episode)
    return comment


def case_resolve(
    *, comment_id: str, staff: AbstractBaseUser | AnonymousUser, source: str = "admin", note: str = ""
) -> bool:
    """Close a report case leaving the comment as it is: a visible comment is kept (reports
    never hide it again), one the reports hid stays hidden (staff agree). Idempotent."""
    with _audited(
        staff=staff, action="resolve", target_type="comment", target_id=comment_id, detail=note, source=source
    ):
        comment = _comment_or_404(comment_id)
        _promise(comment_id=comment_id, author_id=comment.author_id, decision="resolve", episode=0)
        closed = case_close(
            comment_id=comment_id, decision="resolve", staff_username=_username(staff), keep_visible=not comment.hidden
        )
    _decided(comment=comment, decision="resolve", episode=0)
    return closed


def comment_delete_by_staff(
    *, comment_id: str, staff: AbstractBaseUser | AnonymousUser, source: str = "admin", note: str = ""
) -> None:
    """Delete a comment's text for good (staff): body emptied, `deleted_at` stamped, hidden from
    every listing (a tombstone, as its author's delete leaves, but hidden even where replies
    hang under it), its earlier bodies deleted, its case closed. One UpdateItem, then the
    versions, then the case; twice: the same state."""
    with _audited(
        staff=staff, action="delete", target_type="comment", target_id=comment_id, detail=note, source=source
    ):
        comment = _comment_or_404(comment_id)
        _promise(comment_id=comment_id, author_id=comment.author_id, decision="delete", episode=0)
        actions: list[Action] = [
            Comment.body.set(""),
            Comment.deleted_at.set(Comment.deleted_at | clock.now_iso()),
            Comment.hidden.set(True),
            Comment.hidden_by.set("staff"),
            Comment.timeline_key.remove(),
            Comment.reply_to.remove(),
            Comment.profile_author.remove(),
        ]
        write_retrying(
            lambda: comment.update(actions=actions, condition=Comment.comment_id.exists()), what="comment_delete_staff"
        )
        comment_versions_erase(comment_id=comment_id)  # every earlier body of the text goes too
        case_close(comment_id=comment_id, decision="delete", staff_username=_username(staff))
        logger.info("comment %s deleted by staff %s", comment_id, _username(staff))
    _decided(comment=comment, decision="delete", episode=0)


def _user_or_404(user_id: str) -> User:
    try:
        return get_user_model().objects.get(pk=int(user_id))
    except (ValueError, get_user_model().DoesNotExist):
        raise NotFound(gettext("No such user.")) from None


def user_suspend(
    *, user_id: str, staff: AbstractBaseUser | AnonymousUser, source: str = "admin", note: str = ""
) -> User:
    """Suspend an account: it can no longer log in (`is_active` False: Django's backends refuse
    it), its sessions stop authenticating at their next request (the session backend does not
    return an inactive user), and its API token is deleted (DRF refuses inactive users' tokens
    too). One database transaction; twice: the same state. Staff accounts are not suspended here."""
    with _audited(staff=staff, action="suspend", target_type="user", target_id=user_id, detail=note, source=source):
        user = _user_or_404(user_id)
        if user.is_staff or user.is_superuser:
            raise PermissionDenied(gettext("Staff accounts are suspended in the Users admin, not from the queue."))
        with db_transaction.atomic():
            get_user_model().objects.filter(pk=user.pk).update(is_active=False)
            Token.objects.filter(user_id=user.pk).delete()
        user.is_active = False
        logger.warning("user %s suspended by staff %s", user.username, _username(staff))
    return user


def user_unsuspend(
    *, user_id: str, staff: AbstractBaseUser | AnonymousUser, source: str = "admin", note: str = ""
) -> User:
    """Let a suspended account log in again (a new log-in; its old token is gone). Idempotent."""
    with _audited(staff=staff, action="unsuspend", target_type="user", target_id=user_id, detail=note, source=source):
        user = _user_or_404(user_id)
        get_user_model().objects.filter(pk=user.pk).update(is_active=True)
        user.is_active = True
    return user


# The audit line of other staff decisions on comments (actions.held: approve and reject held comments).
staff_audited = _audited
