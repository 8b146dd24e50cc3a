"""Deleting one's account: the request (at once) and the eraser (a worker, resumable).

**The request** (`account_delete_request`, `DELETE /api/me/`, the page /me/delete/): the
password, checked inside the log-in limits; then one database transaction makes the account
unable to log in (`is_active` False, an unusable password), deletes its API tokens and
records the request (`AccountDeletion`). Every session stops at its next request: Django's
session backend returns no inactive user, and each session carries a digest of the password
hash, which no longer matches.

**The eraser** (`erase_accounts [--loop]`, `account_deletions_run`) claims a request with a
lease (a conditional UPDATE), runs the eraser steps every app registers (project/identity/erasure.py)
in their fixed order, and stores the step and cursor it reached after each unit. Killed at any
instant (kill -9), it is taken over when its lease expires and resumes at the stored step and
cursor; the unit in flight when it died runs again, and each step's writes are deletes or
conditional writes, so running it again changes nothing twice (a like is undone exactly once:
its row's delete is conditioned on the row). The last unit deletes the user row and marks the
request done in one database transaction.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.hashers import make_password
from django.db import transaction
from django.db.models import F, Q
from django.utils.translation import gettext, gettext_lazy
from rest_framework.authtoken.models import Token

from project.clock import clock
from project.errors import ApplicationError, PermissionDenied
from project.identity.erasure import erasure_steps
from project.identity.login import password_check_limited
from social.account.limits import account_limit_enforce
from social.models import AccountDeletion, ErasedUsername

logger = logging.getLogger(__name__)

DONE = "done"  # the step name of a finished request
WRONG_PASSWORD = gettext_lazy("That is not your password.")


def _now() -> datetime:
    return datetime.fromtimestamp(clock.now(), tz=UTC)


def account_delete_request(*, user: AbstractBaseUser, password: str, address: str) -> AccountDeletion:
    """Ask for the account's deletion: it can no longer log in from this moment.

    The password is checked inside the log-in limits (a wrong one is a failed log-in of the
    account from `address`; past the budget LockedOut, 429, checks nothing): a stolen session
    cannot delete the account without it. Staff accounts are refused (an administrator deletes
    them, keeping the admin's log). Then one database transaction: inactive, unusable password,
    tokens deleted, the request recorded. Twice (or twice at once): the same request (the user
    id is unique). Dies half way: the transaction is whole or absent.
    """
    if getattr(user, "is_staff", False) or getattr(user, "is_superuser", False):
        raise PermissionDenied(gettext("Staff accounts are deleted by another administrator, in the admin."))
    if not password_check_limited(user, password, address=address):
        raise ApplicationError(WRONG_PASSWORD, field="password")
    with transaction.atomic():
        get_user_model().objects.filter(pk=user.pk).update(is_active=False, password=make_password(None))
        Token.objects.filter(user_id=user.pk).delete()
        deletion, created = AccountDeletion.objects.get_or_create(user_id=user.pk, defaults={"requested_at": _now()})
    if created:
        logger.warning("user %s asked for their account's deletion", user.pk)
    return deletion


# --- the eraser -----------------------------------------------------------------


class LeaseLost(Exception):
    """Another eraser took this request over (this one stalled past its lease): stop here."""


def account_deletions_pending() -> int:
    """Requests not finished yet (the worker's backlog)."""
    return AccountDeletion.objects.filter(finished_at=None).count()


def account_deletions_due(*, limit: int = 10) -> list[AccountDeletion]:
    """Requests old enough (ACCOUNT_DELETION_DELAY_SECONDS) that nobody holds, oldest first."""
    now = _now()
    ripe = now - timedelta(seconds=settings.ACCOUNT_DELETION_DELAY_SECONDS)
    return list(
        AccountDeletion.objects.filter(finished_at=None, requested_at__lte=ripe)
        .filter(Q(lease_until=None) | Q(lease_until__lt=now))
        .order_by("requested_at", "id")[:limit]
    )


def _lease_until() -> datetime:
    return _now() + timedelta(seconds=settings.ACCOUNT_DELETION_LEASE_SECONDS)


def account_deletion_claim(*, deletion: AccountDeletion, owner: str) -> bool:
    """Take a request: one conditional UPDATE (not finished, no live lease), so two erasers
    never both hold it. False: someone else has it."""
    now = _now()
    claimed = (
        AccountDeletion.objects.filter(pk=deletion.pk, finished_at=None)
        .filter(Q(lease_until=None) | Q(lease_until__lt=now))
        .update(lease_owner=owner, lease_until=_lease_until(), attempts=F("attempts") + 1)
    )
    if claimed:
        deletion.refresh_from_db()
    return bool(claimed)


def _progress(deletion: AccountDeletion, *, owner: str, step: str, cursor: str) -> None:
    """Store where the eraser is, and renew its lease; LeaseLost if another eraser took over."""
    stored = AccountDeletion.objects.filter(pk=deletion.pk, lease_owner=owner, finished_at=None).update(
        step=step, cursor=cursor, lease_until=_lease_until()
    )
    if not stored:
        raise LeaseLost(deletion.pk)
    deletion.step, deletion.cursor = step, cursor


def _finish(deletion: AccountDeletion, *, owner: str) -> None:
    """The last unit: the user row goes, and the request is marked done, in one transaction.

    Deleting the row runs the other apps' post_delete hooks (their deletes find nothing left)
    and cascades to what the database keeps per account (tokens, two-factor devices). Its
    username is kept in `ErasedUsername` in the same transaction: never given again, so the
    @mentions of it in others' comments never link to a newcomer.
    """
    with transaction.atomic():
        done = AccountDeletion.objects.filter(pk=deletion.pk, lease_owner=owner, finished_at=None).update(
            step=DONE, cursor="", finished_at=_now(), lease_owner="", lease_until=None
        )
        if not done:
            raise LeaseLost(deletion.pk)
        for username in get_user_model().objects.filter(pk=deletion.user_id).values_list("username", flat=True):
            ErasedUsername.objects.get_or_create(name=username.lower())
        get_user_model().objects.filter(pk=deletion.user_id).delete()
    deletion.step = DONE
    logger.warning("user %s: account erased", deletion.user_id)


def account_erase(*, deletion: AccountDeletion, owner: str, should_stop: Callable[[], bool] = lambda: False) -> bool:
    """Run the eraser steps of a claimed request from where it stopped; True once finished.

    After each unit of a step, the step's cursor is stored (renewing the lease); between
    steps, the next step's name with an empty cursor. `should_stop` is asked between units
    (SIGTERM): the request is released and the next pass resumes it.
    """
    steps = erasure_steps()
    names = [step.name for step in steps]
    start = names.index(deletion.step) if deletion.step in names else 0
    user_id = str(deletion.user_id)
    for position in range(start, len(steps)):
        step = steps[position]
        cursor = deletion.cursor if deletion.step == step.name else ""
        if deletion.step != step.name:
            _progress(deletion, owner=owner, step=step.name, cursor="")
        while True:
            if should_stop():
                AccountDeletion.objects.filter(pk=deletion.pk, lease_owner=owner).update(lease_until=None)
                return False
            following = step.run(user_id=user_id, cursor=cursor or None)
            if following is None:
                break
            cursor = following
            _progress(deletion, owner=owner, step=step.name, cursor=cursor)
    _finish(deletion, owner=owner)
    return True


def account_deletions_run(*, should_stop: Callable[[], bool] = lambda: False, limit: int = 10) -> int:
    """One pass: claim and erase the due requests, one after the other; returns how many finished."""
    owner = f"{os.uname().nodename}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
    finished = 0
    for deletion in account_deletions_due(limit=limit):
        if should_stop():
            break
        if not account_deletion_claim(deletion=deletion, owner=owner):
            continue
        try:
            finished += account_erase(deletion=deletion, owner=owner, should_stop=should_stop)
        except LeaseLost:
            logger.warning("account deletion %s: taken over by another eraser", deletion.pk)
    return finished


def account_export_allow(*, user_id: str) -> None:
    """Count an export against the person's `export` limit (LIMIT_EXPORT, a few a day: each
    reads everything they have); RateLimited (429) past it."""
    account_limit_enforce(name="export", user_id=user_id)
