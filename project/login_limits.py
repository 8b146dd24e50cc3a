"""Log-in guessing limits, kept in the shared limit store (project/limits.py).

Every log-in over HTTP (the log-in page, the admin log-in, POST /api/auth/token/) goes
through `login_attempt_begin` before the password is checked and `login_attempt_end`
after (project.security.LimitedModelBackend), and so does the current password typed on
the password-change page (project.security.password_check_limited). Accounts are named case-insensitively
(`Bob` and `bob` are one account's counts); addresses by project.limits.address_subject
(IPv6 by /64).

- **Per (account, address)**: LOGIN_FAILURE_LIMIT failures in a window of
  LOGIN_LOCKOUT_HOURS lock that account *from that address* until the window ends.
- **Per address**: LOGIN_ADDRESS_FAILURE_LIMIT failures, any accounts, lock the address.
- **Per account** (from anywhere): after LOGIN_ACCOUNT_FREE_FAILURES failures in a day,
  an address that has already failed LOGIN_FRESH_ADDRESS_FAILURES times for the account
  gets one checked guess per delay, doubling with every failure up to
  LOGIN_ACCOUNT_DELAY_MAX. An address that has not been failing for the account is
  still checked at once: the owner gets in from home while their name is being guessed
  elsewhere, and nobody can lock anyone else out. A botnet gets a couple of guesses per
  address and account, then a guess per hour, and each address is limited across
  accounts too.
- A success clears only the failures of *that account from that address*; the
  attempt itself is taken back from the address's count. Nothing else is reset.
- The owner gets an inbox notice (at most one per LOGIN_NOTICE_HOURS) once their account
  saw LOGIN_NOTICE_FAILURES failures in a day (signal `login_failures_noticed`, written to
  the feed by the notifications app).

Attempts are counted *before* the password is checked (a conditional write each), so a
burst of concurrent guesses can't slip past a limit between a read and a write.
Cost of one log-in: 2 conditional writes (address, pair) and 1 strongly consistent read
(the account's backoff); a failure adds 1 write (2 when a delay is claimed), a success
2 (clear the pair, take the attempt back from the address).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from django.conf import settings
from django.dispatch import Signal
from pynamodb.exceptions import UpdateError

from project.clock import clock
from project.errors import LockedOut
from project.limits import address_subject, limit_forget, limit_hit, once_per_window, subject_key, wait_text
from project.models import LimitCounter

if TYPE_CHECKING:
    from pynamodb.expressions.update import Action

logger = logging.getLogger(__name__)

DAY = 86400

# Sent once per LOGIN_NOTICE_HOURS when an existing account saw LOGIN_NOTICE_FAILURES
# failed log-ins in a day: `user_id` (str), `failures` (int).
login_failures_noticed = Signal()


@dataclass(frozen=True)
class LoginAttempt:
    account: str  # the username, lower-cased
    address: str  # the address subject
    pair_failures_before: int  # failures of this account from this address before this attempt
    account_failures: int  # failures of the account (any address) today, before this attempt


def account_name(username: str) -> str:
    return (username or "").strip().lower()


def _window_rule(limit: int) -> str:
    return f"{limit}/{max(1, round(settings.LOGIN_LOCKOUT_HOURS * 3600))}s"


def _pair_rule() -> str:
    return _window_rule(settings.LOGIN_FAILURE_LIMIT)


def _address_rule() -> str:
    return _window_rule(settings.LOGIN_ADDRESS_FAILURE_LIMIT)


def _account_key(account: str, now: float) -> str:
    return f"login_account#{subject_key(account)}#{int(now // DAY) * DAY}"


def account_delay(failures: int) -> float:
    """Seconds between checked guesses from failing addresses after `failures` failures today."""
    over = failures - settings.LOGIN_ACCOUNT_FREE_FAILURES
    if over < 0:
        return 0.0
    return float(min(settings.LOGIN_ACCOUNT_DELAY_MAX, 2 ** min(over, 30)))


def _refused(message: str, retry_after: float) -> LockedOut:
    return LockedOut(f"{message} Try again in {wait_text(retry_after)}.", retry_after=retry_after)


def login_attempt_begin(*, username: str, address: str) -> LoginAttempt:
    """Count the attempt and refuse it (LockedOut, a 429) when a limit holds; else it may be checked.

    Twice or concurrently: each attempt is counted (conditional writes), so no burst gets
    more guesses than the limits. Dies after counting: the attempt counts as a failure.
    """
    account, subject = account_name(username), address_subject(address)
    at_address = limit_hit(name="login_address", subject=subject, rules=_address_rule(), liftable=False)
    if not at_address.allowed:
        raise _refused("Too many failed log-ins from your network.", at_address.retry_after)
    pair = limit_hit(name="login_pair", subject=f"{account}|{subject}", rules=_pair_rule(), liftable=False)
    if not pair.allowed:
        raise _refused("Too many failed log-ins for this account from your network.", pair.retry_after)
    now = clock.now()
    key = _account_key(account, now)
    try:
        state = LimitCounter.get(key, consistent_read=True)
    except LimitCounter.DoesNotExist:
        state = None
    failures = int(state.count or 0) if state else 0
    pair_failures = pair.count - 1
    failing_here = pair_failures >= settings.LOGIN_FRESH_ADDRESS_FAILURES
    if failing_here and failures >= settings.LOGIN_ACCOUNT_FREE_FAILURES:
        next_at = float(state.next_at or 0) if state else 0.0
        if now < next_at:
            raise _refused("Too many failed log-ins for this account.", next_at - now)
        # Claim the one checked guess of this delay: of concurrent guessers, one wins.
        stored_next = state.next_at if state is not None else None
        seen = LimitCounter.next_at.does_not_exist() if stored_next is None else LimitCounter.next_at == stored_next
        try:
            LimitCounter(key).update(actions=[LimitCounter.next_at.set(now + account_delay(failures))], condition=seen)
        except UpdateError as error:
            if error.cause_response_code != "ConditionalCheckFailedException":
                raise
            raise _refused("Too many failed log-ins for this account.", account_delay(failures)) from None
    return LoginAttempt(account=account, address=subject, pair_failures_before=pair_failures, account_failures=failures)


def login_attempt_end(attempt: LoginAttempt, *, user_id: str | None, succeeded: bool) -> None:
    """Record the outcome: a success clears this account's failures from this address only.

    Twice: a success clears again (idempotent); a failure counts twice. Dies half way:
    a success may leave its pair's failures (they expire with the window).
    """
    if succeeded:
        limit_forget(name="login_pair", subject=f"{attempt.account}|{attempt.address}", rules=_pair_rule())
        limit_forget(name="login_address", subject=attempt.address, rules=_address_rule(), hits=1)
        return
    now = clock.now()
    failures = attempt.account_failures + 1
    actions: list[Action] = [
        LimitCounter.count.add(1),
        LimitCounter.expires_at.set(datetime.fromtimestamp(int(now // DAY) * DAY + 2 * DAY, tz=UTC)),
    ]
    if failures >= settings.LOGIN_ACCOUNT_FREE_FAILURES:
        actions.append(LimitCounter.next_at.set(now + account_delay(failures)))
    state = LimitCounter(_account_key(attempt.account, now))
    state.update(actions=actions)
    failures = int(state.count or failures)
    logger.info("failed log-in for %r from %s (%d today)", attempt.account, attempt.address, failures)
    if user_id is not None and failures >= settings.LOGIN_NOTICE_FAILURES:
        hours = max(1, round(settings.LOGIN_NOTICE_HOURS * 3600))
        if once_per_window(name="login_notice", subject=user_id, seconds=hours):
            login_failures_noticed.send(sender=LoginAttempt, user_id=user_id, failures=failures)


def login_limits_clear(*, username: str = "", address: str = "") -> None:
    """Unlock (operators): the account's delays; with `address`, its failures from there and the address's lock.

    Idempotent. Web processes that refused the key ask DynamoDB again within a minute.
    """
    now = clock.now()
    account = account_name(username)
    if account:
        LimitCounter(_account_key(account, now)).delete()
    if address:
        subject = address_subject(address)
        limit_forget(name="login_address", subject=subject, rules=_address_rule())
        if account:
            limit_forget(name="login_pair", subject=f"{account}|{subject}", rules=_pair_rule())
