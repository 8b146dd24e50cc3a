"""Log-in guessing limits, kept in the shared limit store (project/limits/store.py), after OWASP's
"Slow Down Online Guessing Attacks with Device Cookies".

Every log-in over HTTP (the log-in page and its code step, the admin log-in,
POST /api/auth/token/) goes through `login_attempt_begin` before the password (or the
code) is checked and `login_attempt_end` after (project.identity.login.LimitedModelBackend).
Accounts are named as the backend matches them (`account_name`: `Bob`, ` bob\t` and
its full-width letters are one account's counts);
addresses by project.limits.store.address_subject (IPv6 by /64).

- **A browser that logged in to the account** presents its device cookie
  (project.identity.login_devices: signed, per account, a new nonce at every log-in). Its attempts
  count only against that device: LOGIN_DEVICE_FAILURE_LIMIT failures in a window of
  LOGIN_LOCKOUT_HOURS lock that one cookie until the window ends. Nothing a stranger does
  anywhere else spends it, so the owner gets in from their own browsers during any attack.
- **Every other attempt** ("untrusted": no cookie, a forged or foreign one) is limited
  per (account, address) (LOGIN_FAILURE_LIMIT a window), per address (any accounts,
  LOGIN_ADDRESS_FAILURE_LIMIT) and by the account's **untrusted budget**:
  LOGIN_UNTRUSTED_FAILURES attempts in a window of LOGIN_UNTRUSTED_HOURS from all
  untrusted clients together. Once spent, every untrusted attempt at the account is
  refused (429) whatever its address, without checking the password: a botnet gets that
  many guesses per window in all, not some per address. The owner's new browser gets in
  through the password-reset mail, whose success issues a device cookie.
- **A logged-in person retyping their password** (the password-change page, turning
  two-factor off): per (account, address) and per address as above, and per account by a
  budget only that account's own sessions can spend (LOGIN_DEVICE_FAILURE_LIMIT), never
  the untrusted one: a botnet cannot stop the owner changing their password.
- A success takes back its own attempt (from the device, or the address and the untrusted
  budget) and clears that account's failures from that address; nothing else is reset,
  so logging in to one's own account between guesses resets no one else's limits.
- The owner gets an inbox notice (at most one per LOGIN_NOTICE_HOURS) once their account
  saw LOGIN_NOTICE_FAILURES failures in a day, saying how many and from how many
  networks (signal `login_failures_noticed`, written to the feed by the notifications app).

Attempts are counted *before* the password is checked (a conditional write each), so a
burst of concurrent guesses can't slip past a limit between a read and a write. Cost of
one log-in: from a known browser 1 conditional write (3 on a success: the take-back and the
network's mark); untrusted 3 (address, pair, budget), a success adds 4 (take-backs, the pair's
clear, the network's mark: `login_address_known`, which reset mails ask);
a failure adds 2 (the day's failure count and the network's once-a-day mark).
"""

from __future__ import annotations

import logging
import unicodedata
from dataclasses import dataclass

from django.conf import settings
from django.dispatch import Signal
from django.utils.translation import gettext

from project.errors import LockedOut
from project.limits.store import (
    address_subject,
    limit_forget,
    limit_hit,
    mark_present,
    mark_set,
    once_per_window,
    tally_add,
    wait_text,
)

logger = logging.getLogger(__name__)

DAY = 86400
# A network a log-in to the account succeeded from is the owner's for this long (its reset
# mails count against the owner's budget, social/reset_mail.py).
KNOWN_ADDRESS_DAYS = 90

# Sent once per LOGIN_NOTICE_HOURS when an existing account saw LOGIN_NOTICE_FAILURES
# failed log-ins in a day: `user_id` (str), `failures` (int), `addresses` (int, networks).
login_failures_noticed = Signal()

UNTRUSTED_SPENT = (
    "Too many failed log-ins for this account from browsers it has not logged in from. "
    "Log in from a browser you used before, or reset your password by e-mail: "
    "the reset link also lets this browser in."
)

# An attempt's kind: from a browser holding the account's device cookie, untrusted, or a
# logged-in session retyping its password.
DEVICE, UNTRUSTED, SIGNED_IN = "device", "untrusted", "signed_in"


@dataclass(frozen=True)
class LoginAttempt:
    account: str  # the username, lower-cased
    address: str  # the address subject
    kind: str  # DEVICE, UNTRUSTED or SIGNED_IN
    device: str = ""  # the device cookie's nonce (DEVICE)


def account_name(username: str) -> str:
    """The account a typed name counts as: NFKC-normalised (full-width letters are the plain ones),
    stripped of surrounding spaces and tabs, lower-cased (the backend matches names in any case),
    so every form of a name that logs in as one account counts as that one account."""
    return unicodedata.normalize("NFKC", username or "").strip().lower()


def _window_rule(limit: int, hours: float | None = None) -> str:
    hours = settings.LOGIN_LOCKOUT_HOURS if hours is None else hours
    return f"{limit}/{max(1, round(hours * 3600))}s"


def _pair_rule() -> str:
    return _window_rule(settings.LOGIN_FAILURE_LIMIT)


def _address_rule() -> str:
    return _window_rule(settings.LOGIN_ADDRESS_FAILURE_LIMIT)


def _device_rule() -> str:
    return _window_rule(settings.LOGIN_DEVICE_FAILURE_LIMIT)


def _untrusted_rule() -> str:
    return _window_rule(settings.LOGIN_UNTRUSTED_FAILURES, settings.LOGIN_UNTRUSTED_HOURS)


def _refused(message: str, retry_after: float) -> LockedOut:
    return LockedOut(
        gettext("%(message)s Try again in %(wait_text_retry_after)s.")
        % {"message": message, "wait_text_retry_after": wait_text(retry_after)},
        retry_after=retry_after,
    )


def login_attempt_begin(*, username: str, address: str, device: str = "", signed_in: bool = False) -> LoginAttempt:
    """Count the attempt and refuse it (LockedOut, a 429) when a limit holds; else it may be checked.

    `device`: the nonce of a valid device cookie for this account (project.identity.login_devices);
    `signed_in`: the account's own logged-in session asks. Twice or concurrently: each
    attempt is counted (conditional writes), so no burst gets more checks than the limits.
    Dies after counting: the attempt counts as a failure.
    """
    account, subject = account_name(username), address_subject(address)
    if device and not signed_in:
        at_device = limit_hit(name="login_device", subject=device, rules=_device_rule(), liftable=False)
        if not at_device.allowed:
            raise _refused("Too many failed log-ins from this browser.", at_device.retry_after)
        return LoginAttempt(account=account, address=subject, kind=DEVICE, device=device)
    at_address = limit_hit(name="login_address", subject=subject, rules=_address_rule(), liftable=False)
    if not at_address.allowed:
        raise _refused("Too many failed log-ins from your network.", at_address.retry_after)
    pair = limit_hit(name="login_pair", subject=f"{account}|{subject}", rules=_pair_rule(), liftable=False)
    if not pair.allowed:
        raise _refused("Too many failed log-ins for this account from your network.", pair.retry_after)
    if signed_in:
        own = limit_hit(name="login_signed_in", subject=account, rules=_device_rule(), liftable=False)
        if not own.allowed:
            raise _refused("Too many wrong passwords typed in this account.", own.retry_after)
        return LoginAttempt(account=account, address=subject, kind=SIGNED_IN)
    budget = limit_hit(name="login_untrusted", subject=account, rules=_untrusted_rule(), liftable=False)
    if not budget.allowed:
        raise _refused(UNTRUSTED_SPENT, budget.retry_after)
    return LoginAttempt(account=account, address=subject, kind=UNTRUSTED)


def _take_back(attempt: LoginAttempt, hits: int) -> None:
    if attempt.kind == DEVICE:
        limit_forget(name="login_device", subject=attempt.device, rules=_device_rule(), hits=hits)
        return
    limit_forget(name="login_pair", subject=f"{attempt.account}|{attempt.address}", rules=_pair_rule())
    limit_forget(name="login_address", subject=attempt.address, rules=_address_rule(), hits=hits)
    if attempt.kind == SIGNED_IN:
        limit_forget(name="login_signed_in", subject=attempt.account, rules=_device_rule(), hits=hits)
    else:
        limit_forget(name="login_untrusted", subject=attempt.account, rules=_untrusted_rule(), hits=hits)


def login_attempt_end(
    attempt: LoginAttempt, *, user_id: str | None, succeeded: bool, earlier: LoginAttempt | None = None
) -> None:
    """Record the outcome: a success takes back its own attempt (and `earlier`'s: the password
    step of a log-in whose code step this is) and clears this account's failures from this
    address only; a failure counts towards the owner's notice.

    Twice: a success takes back twice (never below zero); a failure counts twice. Dies half
    way: a success may leave its attempt counted (it expires with the window).
    """
    if succeeded:
        _known_mark(attempt)  # the owner's network: its reset mails have a budget of their own
        _take_back(attempt, 1)
        if earlier is not None:
            _take_back(earlier, 1)
        return
    # Networks counted once a day per account: the mark is a conditional put.
    new_network = once_per_window(name="login_failed_from", subject=f"{attempt.account}|{attempt.address}", seconds=DAY)
    failures, addresses = tally_add(
        name="login_account", subject=attempt.account, seconds=DAY, distinct=int(new_network)
    )
    logger.info(
        "failed log-in for %r from %s (%s; %d today from %d networks)",
        attempt.account,
        attempt.address,
        attempt.kind,
        failures,
        addresses,
    )
    if user_id is not None and failures >= settings.LOGIN_NOTICE_FAILURES:
        hours = max(1, round(settings.LOGIN_NOTICE_HOURS * 3600))
        if once_per_window(name="login_notice", subject=user_id, seconds=hours):
            login_failures_noticed.send(sender=LoginAttempt, user_id=user_id, failures=failures, addresses=addresses)


def login_address_known(*, username: str, address: str) -> bool:
    """The network `address` (IPv6: its /64) logged in to the account in the last KNOWN_ADDRESS_DAYS
    (a strongly consistent read of the mark a success writes)."""
    if not address:
        return False
    return mark_present(name="login_known", subject=f"{account_name(username)}|{address_subject(address)}")


def _known_mark(attempt: LoginAttempt) -> None:
    mark_set(name="login_known", subject=f"{attempt.account}|{attempt.address}", seconds=KNOWN_ADDRESS_DAYS * DAY)


def login_limits_clear(*, username: str = "", address: str = "") -> None:
    """Unlock (operators): the account's untrusted budget; with `address`, its failures from
    there and the address's lock.

    Idempotent. Web processes that refused the key ask DynamoDB again within a minute.
    """
    account = account_name(username)
    if account:
        limit_forget(name="login_untrusted", subject=account, rules=_untrusted_rule())
        limit_forget(name="login_signed_in", subject=account, rules=_device_rule())
    if address:
        subject = address_subject(address)
        limit_forget(name="login_address", subject=subject, rules=_address_rule())
        if account:
            limit_forget(name="login_pair", subject=f"{account}|{subject}", rules=_pair_rule())
