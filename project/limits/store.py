"""The shared limit store: counters in DynamoDB that every web process on every machine sees.

`limit_hit(name=..., subject=...)` counts one hit of a named limit for a subject (an
account, an address) and answers whether it is allowed and, if not, when to retry.
The state is one item per (limit, subject, window of the limit's longest rule) in the
`limits` table (project.models.LimitCounter), changed by one conditional UpdateItem:

    ADD count 1  IF count < limit (or the item is new)

so two processes can never both take the last unit: DynamoDB applies conditional
updates of one item one at a time. A limit of several rules ("10/min,100/day") keeps
its shorter windows in the same item; the one UpdateItem checks and counts them all.

Cost: one write (1 WCU, the item is far below 1 KB) per allowed check; a second write
at the first check of each new shorter window (the reset of its count); a denied check
costs its failed conditional write (1 WCU) plus a strongly consistent GetItem (1 RCU)
to learn which rule denied and until when. After that this process answers "denied"
from memory until that window ends: a refused client hammering one key costs one
write per process per window (per minute at most), not one per request (the hot-key
bound). Memory only ever repeats a denial DynamoDB gave; it never allows anything.

`limit_hit(..., block=n)` leases n units at once for one-rule limits polled very
often (the live poll): one write per n hits. The limit still holds across processes
(a lease is taken with `count + n <= limit`); units leased by one process and unused
make the others refuse slightly early, by at most (processes - 1) x n per window.

Windows are fixed (aligned to the epoch), so a client can spend a rule's budget at
the end of one window and again at the start of the next: at most twice the rule in
any span of one window. That is the price of one write per check.

`once_per_window` is a conditional put with TTL: true the first time a subject is
seen in a window (view counting, "at most one notice per hours").

RATE_LIMITS_ENABLED=False lifts every write limit and API throttle (tests, benches);
log-in limits pass `liftable=False` and always hold.
"""

from __future__ import annotations

import hashlib
import ipaddress
import logging
import math
import re
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from django.conf import settings
from pynamodb.exceptions import PutError

from project.clock import clock
from project.dynamo.transactions import conditional_update
from project.errors import RateLimited, condition_failed
from project.models import LimitCounter

if TYPE_CHECKING:
    from pynamodb.expressions.update import Action

logger = logging.getLogger(__name__)

UNITS = {
    "s": 1,
    "sec": 1,
    "second": 1,
    "m": 60,
    "min": 60,
    "minute": 60,
    "h": 3600,
    "hour": 3600,
    "d": 86400,
    "day": 86400,
}
RULES_MAX = 3  # the longest rule's count plus two shorter windows (LimitCounter's attributes)
EXPIRY_GRACE = 3600  # TTL after the window ends (AWS deletes within days anyway)
UPDATE_ATTEMPTS = 4
MEMORY_MAX = 10_000  # keys remembered per process (denials, leases); oldest dropped first
# A denial is remembered at most this long (then asked again), so an operator's unlock
# (`login_unlock`) reaches every process within a minute.
MEMORY_SECONDS_MAX = 60.0


@dataclass(frozen=True)
class Rule:
    limit: int
    window: int  # seconds

    def start(self, now: float) -> int:
        return int(now // self.window) * self.window


_RULE = re.compile(r"\s*(\d+)\s*/\s*(\d*)\s*([a-z]+)\s*\Z")


def rules_parse(text: str) -> tuple[Rule, ...]:
    """`"10/min,100/day"` (also `30/5min`, `2/h`) as rules, shortest window first."""
    rules = []
    for part in text.lower().split(","):
        match = _RULE.match(part)
        unit = match and (match[3] if match[3] in UNITS else match[3].removesuffix("s"))
        if not match or unit not in UNITS or int(match[1]) < 1:
            raise ValueError(f"A limit is 1 to {RULES_MAX} rules like '10/min,100/day': {text!r}")
        rules.append(Rule(limit=int(match[1]), window=int(match[2] or 1) * UNITS[unit]))
    ordered = tuple(sorted(rules, key=lambda rule: rule.window))
    if len(ordered) > RULES_MAX or len({rule.window for rule in ordered}) != len(ordered):
        raise ValueError(f"A limit is 1 to {RULES_MAX} rules with different windows: {text!r}")
    return ordered


@dataclass(frozen=True)
class LimitDecision:
    allowed: bool
    retry_after: float = 0.0  # seconds until a denied subject may try again
    count: int = 0  # hits counted in the longest rule's window, this one included (0 if unknown)


ALLOWED = LimitDecision(allowed=True)


def address_subject(address: str) -> str:
    """The subject an address is limited as: IPv4 as is, IPv6 by its /64 network.

    One IPv6 subscriber holds a whole /64 (2^64 addresses): per-address limits on
    single IPv6 addresses would not limit anyone.
    """
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address[:64] or "unknown"
    if parsed.version == 4:
        return str(parsed)
    if parsed.ipv4_mapped is not None:
        return str(parsed.ipv4_mapped)
    return str(ipaddress.ip_network(f"{parsed}/64", strict=False))


def subject_key(subject: str) -> str:
    # Subjects come from clients (usernames, addresses): keep keys short and printable.
    if len(subject) <= 64 and subject.isprintable() and "#" not in subject:
        return subject
    return "h:" + hashlib.sha256(subject.encode("utf-8", "surrogatepass")).hexdigest()[:40]


class _Memory:
    """Per-process, bounded: denials DynamoDB answered (until their window ends) and leased units."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.denied: dict[str, tuple[float, float, int]] = {}  # key -> (remembered until, retry at, count)
        self.leased: dict[str, int] = {}  # key -> units left

    @staticmethod
    def _bound(table: dict[str, Any]) -> None:
        while len(table) > MEMORY_MAX:
            table.pop(next(iter(table)))

    def denial(self, key: str, now: float) -> LimitDecision | None:
        with self.lock:
            until, retry_at, count = self.denied.get(key, (0.0, 0.0, 0))
            if until > now:
                return LimitDecision(allowed=False, retry_after=retry_at - now, count=count)
            self.denied.pop(key, None)
            return None

    def deny(self, key: str, *, now: float, retry_at: float, count: int) -> None:
        with self.lock:
            self.denied[key] = (min(retry_at, now + MEMORY_SECONDS_MAX), retry_at, count)
            self._bound(self.denied)

    def take_leased(self, key: str) -> bool:
        with self.lock:
            left = self.leased.get(key, 0)
            if left <= 0:
                return False
            self.leased[key] = left - 1
            return True

    def lease(self, key: str, units: int) -> None:
        with self.lock:
            self.leased[key] = units
            self._bound(self.leased)

    def clear(self) -> None:
        with self.lock:
            self.denied.clear()
            self.leased.clear()


_memory = _Memory()


def limits_forget_memory() -> None:
    """Drop this process's remembered denials and leases (tests, as another process would see)."""
    _memory.clear()


def _expiry(at: float) -> datetime:
    return datetime.fromtimestamp(at + EXPIRY_GRACE, tz=UTC)


_SHORT = ((LimitCounter.start1, LimitCounter.count1), (LimitCounter.start2, LimitCounter.count2))


def _count(rules: tuple[Rule, ...], key: str, now: float, units: int = 1) -> LimitDecision:
    """One conditional UpdateItem (two when a shorter window rolled) counting `units` hits.

    Refused: `count` is what is stored, so a caller leasing several units knows how many still fit.
    """
    longest, shorter = rules[-1], rules[:-1]
    long_end = longest.start(now) + longest.window
    starts = [rule.start(now) for rule in shorter]
    item = LimitCounter(key)
    # The common case: every shorter window is the one already stored (or the item is new).
    condition = LimitCounter.count.does_not_exist() | (LimitCounter.count <= longest.limit - units)
    actions: list[Action] = [LimitCounter.count.add(units), LimitCounter.expires_at.set(_expiry(long_end))]
    for (start_attr, count_attr), rule, start in zip(_SHORT, shorter, starts, strict=False):
        condition &= start_attr.does_not_exist() | ((start_attr == start) & (count_attr <= rule.limit - units))
        actions += [start_attr.set(start), count_attr.add(units)]
    for _ in range(UPDATE_ATTEMPTS):
        if conditional_update(item, actions=actions, condition=condition, what="limit count"):
            return LimitDecision(allowed=True, count=int(item.count or 0))
        # Which rule refused, or did a shorter window roll over? Read what is stored.
        stored = _stored(key)
        if stored is None:
            continue  # gone meanwhile (TTL): the next attempt creates it
        count = int(stored.count or 0)
        refusals = []
        if count + units > longest.limit:
            refusals.append(long_end)
        condition = LimitCounter.count <= longest.limit - units
        actions = [LimitCounter.count.add(units), LimitCounter.expires_at.set(_expiry(long_end))]
        for (start_attr, count_attr), rule, start in zip(_SHORT, shorter, starts, strict=False):
            stored_start = getattr(stored, start_attr.attr_name)
            if stored_start is not None and stored_start >= start:
                # This window (or, with another machine's clock a little ahead, the next one).
                stored_start = int(stored_start)
                if int(getattr(stored, count_attr.attr_name) or 0) + units > rule.limit:
                    refusals.append(stored_start + rule.window)
                condition &= (start_attr == stored_start) & (count_attr <= rule.limit - units)
                actions.append(count_attr.add(units))
            else:
                # A new window of this rule: reset its count, unless another process just did.
                condition &= start_attr.does_not_exist() if stored_start is None else (start_attr == stored_start)
                actions += [start_attr.set(start), count_attr.set(units)]
        if refusals:
            return LimitDecision(allowed=False, retry_after=max(refusals) - now, count=count)
    # Other processes kept changing the item between our read and write: refuse for now.
    return LimitDecision(allowed=False, retry_after=1.0)


def _stored(key: str) -> LimitCounter | None:
    try:
        return LimitCounter.get(key, consistent_read=True)
    except LimitCounter.DoesNotExist:
        return None


def limit_hit(
    *, name: str, subject: str, rules: str | None = None, block: int = 1, liftable: bool = True
) -> LimitDecision:
    """Count one hit of limit `name` (its rules: `rules`, else settings.RATE_LIMITS) for `subject`.

    Twice: two hits (a hit is an event, not a state). Concurrently, from any process:
    the conditional update admits exactly as many as the rules allow. Dies half way:
    the hit is counted or not; an allowed hit whose action then failed stays counted.
    """
    if liftable and not settings.RATE_LIMITS_ENABLED:
        return ALLOWED
    parsed = rules_parse(rules if rules is not None else limit_rules(name))
    now = clock.now()
    key = f"{name}#{subject_key(subject)}#{parsed[-1].start(now)}"
    remembered = _memory.denial(key, now)
    if remembered is not None:
        return remembered
    if block > 1 and len(parsed) == 1:
        if _memory.take_leased(key):
            return ALLOWED
        units = min(block, parsed[0].limit)
        decision = _count(parsed, key, now, units=units)
        if not decision.allowed and 0 < parsed[0].limit - decision.count < units:
            units = parsed[0].limit - decision.count  # the window's last units: lease what is left
            decision = _count(parsed, key, now, units=units)
        if decision.allowed:
            _memory.lease(key, units - 1)
            return decision
        if decision.count < parsed[0].limit:  # another process took the rest meanwhile: one by one
            decision = _count(parsed, key, now)
    else:
        decision = _count(parsed, key, now)
    if not decision.allowed:
        _memory.deny(key, now=now, retry_at=now + decision.retry_after, count=decision.count)
    return decision


def limit_forget(*, name: str, subject: str, rules: str, hits: int | None = None) -> None:
    """Take back `hits` counted hits (all when None) of the current window: a success clears its failures.

    Twice: with `hits`, takes back twice (never below zero); without, idempotent.
    """
    parsed = rules_parse(rules)
    key = f"{name}#{subject_key(subject)}#{parsed[-1].start(clock.now())}"
    with _memory.lock:
        _memory.denied.pop(key, None)
    item = LimitCounter(key)
    if hits is None:
        item.delete()
        return
    conditional_update(
        item, actions=[LimitCounter.count.add(-hits)], condition=LimitCounter.count >= hits, what="limit forget"
    )


def limit_rules(name: str, *, new_account: bool = False) -> str:
    """The rules of a named write limit (settings.RATE_LIMITS: `(rules, rules for new accounts)`)."""
    rules: str
    new_rules: str
    try:
        rules, new_rules = settings.RATE_LIMITS[name]
    except KeyError:
        raise ValueError(f"No limit named {name!r} in settings.RATE_LIMITS") from None
    return new_rules if new_account and new_rules else rules


def limit_enforce(*, name: str, subject: str, rules: str | None = None, message: str | None = None) -> None:
    """`limit_hit`, raising RateLimited (429 with Retry-After) when refused."""
    decision = limit_hit(name=name, subject=subject, rules=rules)
    if not decision.allowed:
        raise RateLimited(message or rate_limited_message(decision.retry_after), retry_after=decision.retry_after)


def rate_limited_message(retry_after: float) -> str:
    return f"You are doing that too often. Please wait {wait_text(retry_after)} and try again."


def wait_text(seconds: float) -> str:
    seconds = max(1, math.ceil(seconds))
    if seconds < 90:
        return f"{seconds} second{'s' if seconds != 1 else ''}"
    minutes = math.ceil(seconds / 60)
    if minutes < 90:
        return f"{minutes} minutes"
    return f"{math.ceil(minutes / 60)} hours"


def recipient_subject(email: str) -> str:
    """The subject an e-mail address is limited as: a digest of it in lower case (no address is
    stored in the limits table, and `Alice@x` and `alice@x` are one inbox)."""
    return "email:" + hashlib.sha256(email.strip().lower().encode()).hexdigest()[:32]


def recipient_mail_allow(*, name: str, email: str) -> bool:
    """Count one mail about to be sent to `email` against limit `name`; False when its budget is
    spent (the caller then sends nothing). Count mails, not requests: a request that sends nothing
    spends nothing, so strangers' requests that found no account cost the owner nothing.

    Twice: two mails counted. Concurrently: exactly the budget is allowed. Dies after counting,
    before sending: that mail stays counted (the person asks again)."""
    return limit_hit(name=name, subject=recipient_subject(email)).allowed


def once_per_window(*, name: str, subject: str, seconds: int) -> bool:
    """True the first time `subject` is seen for `name` in this window of `seconds` (a conditional put).

    Twice in one window: false the second time. Concurrently: one caller gets true.
    Costs one write (1 WCU) whether or not it was the first.
    """
    now = clock.now()
    start = int(now // seconds) * seconds
    mark = LimitCounter(f"once#{name}#{subject_key(subject)}#{start}", expires_at=_expiry(start + seconds))
    try:
        mark.save(condition=LimitCounter.key.does_not_exist())
    except PutError as error:
        if not condition_failed(error):
            raise
        return False
    return True


def mark_set(*, name: str, subject: str, seconds: float) -> None:
    """Remember `subject` under `name` for `seconds` from now (one put: 1 WCU).

    Twice: the later expiry wins. Concurrently: one of the puts wins, either is right."""
    expires = datetime.fromtimestamp(clock.now() + seconds, tz=UTC)
    LimitCounter(f"{name}#{subject_key(subject)}", expires_at=expires).save()


def mark_present(*, name: str, subject: str) -> bool:
    """Whether `mark_set` remembered `subject` under `name` and it has not expired (a strongly
    consistent read: 1 RCU, billed when nothing is found too)."""
    stored = _stored(f"{name}#{subject_key(subject)}")
    return stored is not None and (stored.expires_at is None or stored.expires_at.timestamp() > clock.now())


def tally_add(*, name: str, subject: str, seconds: int, count: int = 1, distinct: int = 0) -> tuple[int, int]:
    """Add `count` events and `distinct` new sources to `subject`'s tally under `name` in the current
    window of `seconds`; answers the window's (events, sources) after the addition (one update: 1 WCU).

    Twice: counted twice. Concurrently: both counted (atomic adds). The tally expires one window
    after its own ends."""
    now = clock.now()
    start = int(now // seconds) * seconds
    state = LimitCounter(f"{name}#{subject_key(subject)}#{start}")
    state.update(
        actions=[
            LimitCounter.count.add(count),
            LimitCounter.addresses.add(distinct),
            LimitCounter.expires_at.set(datetime.fromtimestamp(start + 2 * seconds, tz=UTC)),
        ]
    )
    return int(state.count or count), int(state.addresses or distinct)
