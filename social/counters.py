"""Sharded counters (docs/explanation/counters.md): a counter is the sum of its shard items.

A counter key names what is counted (`like#<comment_id>`, `view#<comment_id>`).
Writers add to one shard, so concurrent writers on a hot counter spread over
several items instead of colliding on one; readers sum the shards with one
strongly consistent Query.

Every change also raises the counter's *due flag* on its `counter_totals` item
(`changed_at`, `due_at`, `due_part`, each `if_not_exists`): the first change of a
burst sets it, the rest leave it as it is, so a burst of 10,000 likes schedules one
aggregation. The aggregator (social/aggregation.py) finds flags through the sparse,
write-sharded `due` index, sums the shards and writes the total.

How many shards a counter is written to: the kind's setting (LIKE_COUNTER_SHARDS,
VIEW_COUNTER_SHARDS), or a per-counter override on its `counter_totals` item that
contention raises and staff set for a hot counter. A like counter's override is also
carried by its comment item (`like_shards`), which a like reads anyway: the like
learns its shard count with no read of its own. Changing it never loses a count:
reads sum *every* shard item of the counter, whatever shard count its writers used.
"""

from __future__ import annotations

import logging
import random
import threading
import zlib
from collections import OrderedDict
from collections.abc import Collection

from cachetools import TTLCache
from django.conf import settings
from django.utils.translation import gettext
from pynamodb.exceptions import DoesNotExist, UpdateError
from pynamodb.transactions import TransactWrite

from project.clock import clock
from project.dynamo.shared_reads import SharedReads
from project.errors import ApplicationError, NotFound, condition_failed
from project.serving.pools import READS, pool
from social.models import Comment, CounterShard, CounterTotal

logger = logging.getLogger(__name__)

LIKES = "like"
VIEWS = "view"
# Every reaction of a comment, one counter: the reaction's name is in the shard number
# (social/reactions/names.py), so one Query reads all six counts and their sum ranks the comment.
REACTIONS = "reaction"
KINDS = (LIKES, VIEWS, REACTIONS)

# How long a process trusts a per-counter shard override it read (a raised shard
# count reaches every web process within this time; until then writers keep using
# the old count, which is still exact: reads sum every shard).
SHARD_OVERRIDE_CACHE_SECONDS = 30.0
_CACHE_MAX = 10_000

_lock = threading.Lock()
# The shard override read per counter (None: none stored), forgotten after SHARD_OVERRIDE_CACHE_SECONDS.
_shard_overrides: TTLCache = TTLCache(maxsize=_CACHE_MAX, ttl=SHARD_OVERRIDE_CACHE_SECONDS)
_NOT_CACHED = object()
_flag_seen: OrderedDict[str, float] = OrderedDict()
# Eventually consistent counter values, shared by this process's requests for a moment.
_shared_values: SharedReads[int] = SharedReads(maxsize=_CACHE_MAX)


def counter_key(*, kind: str, object_id: str) -> str:
    return f"{kind}#{object_id}"


def counter_key_parts(key: str) -> tuple[str, str]:
    kind, _, object_id = key.partition("#")
    return kind, object_id


def _remember(cache: OrderedDict, key: str, value) -> None:
    with _lock:
        cache[key] = value
        cache.move_to_end(key)
        while len(cache) > _CACHE_MAX:
            cache.popitem(last=False)


def _override_remember(key: str, shards: int | None) -> None:
    with _lock:
        _shard_overrides[key] = shards


def counters_forget_caches() -> None:
    """Drop this process's cached shard overrides, seen due flags and shared values (tests, benchmarks)."""
    with _lock:
        _shard_overrides.clear()
        _flag_seen.clear()
        _grown_at.clear()
    _shared_values.clear()


def _kind_shards(kind: str) -> int:
    return {LIKES: settings.LIKE_COUNTER_SHARDS, VIEWS: settings.VIEW_COUNTER_SHARDS}.get(kind, 1)


def _shard_override(key: str) -> int | None:
    with _lock:  # cachetools' caches are not thread-safe
        cached = _shard_overrides.get(key, _NOT_CACHED)
    if cached is not _NOT_CACHED:
        return cached
    try:
        # Consistent: a value read is kept SHARD_OVERRIDE_CACHE_SECONDS, and an eventually
        # consistent read a moment after staff set the count could keep the old one that long.
        item = CounterTotal.get(key, attributes_to_get=["counter_key", "shards"], consistent_read=True)
        shards = int(item.shards) if item.shards else None
    except DoesNotExist:
        shards = None
    _override_remember(key, shards)
    return shards


def counter_shard_count(*, key: str) -> int:
    """Shards new writes of this counter spread over: its override, else the kind's setting."""
    override = _shard_override(key)
    return max(1, override or _kind_shards(counter_key_parts(key)[0]))


def _override_known(key: str) -> int | None:
    """The override this process holds for the counter (its own growth or set, or one read
    within SHARD_OVERRIDE_CACHE_SECONDS), without reading anything."""
    with _lock:
        return _shard_overrides.get(key)


def like_counter_shard_count(*, comment: Comment) -> int:
    """Shards a like of this comment spreads over, from the comment item the like has read: no read of its own.

    The count the comment carries (`like_shards`, written whenever the counter grows or
    staff set it), else LIKE_COUNTER_SHARDS; or what this process holds, if larger (its
    own growth a moment ago, whose write on the comment may not have landed).
    """
    carried = int(comment.like_shards) if comment.like_shards else settings.LIKE_COUNTER_SHARDS
    known = _override_known(counter_key(kind=LIKES, object_id=comment.comment_id))
    return max(1, carried, known or 0)


def _comment_like_shards_raise(*, comment_id: str, shards: int) -> bool:
    """Write a grown like-counter shard count onto its comment item, unless it carries as many or more.

    One conditional UpdateItem (the comment exists; `like_shards` absent or smaller, so
    concurrent growers never lower it). Best effort: refused (as many or more stored, or
    no such comment) or failed (the item is busy, throttled), the next growth writes again.
    Cost: the comment item's size in KB, rounded up, in write units, twice: the `timeline`
    or `replies` index (all attributes projected) holds a visible comment too; the
    keys-only `author` index is not written. Rare: only when the counter grows, at most
    four times on its way from 1 to COUNTER_SHARDS_MAX shards. Returns whether it wrote.
    """
    try:
        Comment(comment_id).update(
            actions=[Comment.like_shards.set(shards)],
            condition=Comment.comment_id.exists()
            & (Comment.like_shards.does_not_exist() | (Comment.like_shards < shards)),
        )
    except UpdateError as error:
        if not condition_failed(error):
            code = error.cause_response_code
            logger.info("comment %s: like shard count %d not stored yet (%s)", comment_id, shards, code)
        return False
    return True


def counter_shard_for(*, key: str, member: str) -> int:
    """The shard a member's contribution goes to: stable while the shard count is, so an
    undo usually hits the same shard; when the count changed in between, the undo lands on
    another shard, which may dip below zero while the sum of all shards stays exact."""
    return zlib.crc32(member.encode()) % counter_shard_count(key=key)


def _due_part(key: str) -> str:
    return str(zlib.crc32(key.encode()) % settings.COUNTER_DUE_SHARDS)


def _due_flag_actions(key: str, now: float) -> list:
    """Raise the due flag unless one is pending: every action is `if_not_exists` (or a
    constant), so it never fails a condition and can ride inside any transaction."""
    kind, object_id = counter_key_parts(key)
    return [
        CounterTotal.changed_at.set(CounterTotal.changed_at | now),
        CounterTotal.due_at.set(CounterTotal.due_at | now + settings.COUNTER_AGGREGATION_DELAY),
        CounterTotal.due_part.set(CounterTotal.due_part | _due_part(key)),
        CounterTotal.kind.set(kind),
        CounterTotal.object_id.set(object_id),
    ]


def flag_reuse_seconds() -> float:
    """How long after a flag's `changed_at` a view writer counts on it instead of writing it.

    Longer than the delay, so that in steady state the aggregator claims the flag while
    writers still rely on it, and they write a new one only after the claim.
    """
    return settings.COUNTER_AGGREGATION_DELAY * 1.5


def flag_settle_seconds() -> float:
    """The aggregator reads no shard before `changed_at` + this: the reuse window plus a
    grace for clock skew, so every write that relied on the flag is in the sum."""
    return settings.COUNTER_AGGREGATION_DELAY * 1.75


class ShardPick:
    """The shard of one transactional counter write, re-picked for every attempt.

    Random among the shards on which this process has no write of the counter in flight:
    a process never sends two concurrent writes of one counter to the same shard (which
    on AWS would cancel one of them), and a retry after a conflict lands elsewhere. Use
    as a context manager around the whole retry loop, so the last pick is released.
    `shards`: the counter's shard count as the caller knows it (a like: from the comment it
    read, `like_counter_shard_count`); the pick reads nothing, and follows the growth this
    process makes meanwhile (`shards` is then the grown count).
    """

    _inflight: dict[str, dict[int, int]] = {}

    def __init__(self, key: str, *, shards: int):
        self.key = key
        self.shards = shards
        self.shard: int | None = None

    def __enter__(self) -> ShardPick:
        return self

    def __exit__(self, *exc) -> None:
        with _lock:
            self._release()

    def _release(self) -> None:
        if self.shard is None:
            return
        busy = self._inflight.get(self.key, {})
        busy[self.shard] = busy.get(self.shard, 1) - 1
        if busy[self.shard] <= 0:
            busy.pop(self.shard, None)
        if not busy:
            self._inflight.pop(self.key, None)
        self.shard = None

    def contended(self) -> None:
        """An attempt met a conflict or throttling: grow the counter (`counter_contended`)."""
        self.shards = counter_contended(key=self.key, current=self.shards)

    def next(self) -> int:
        shards = self.shards = max(self.shards, _override_known(self.key) or 0)
        with _lock:
            in_flight = len(self._inflight.get(self.key, {}))
        if in_flight >= shards:
            # More writes of this counter in flight here than it has shards: a conflict
            # is certain, so grow now (with room to spare) instead of after a cancelled attempt.
            shards = self.shards = counter_contended(key=self.key, at_least=2 * (in_flight + 1), current=shards)
        with _lock:
            self._release()
            busy = self._inflight.setdefault(self.key, {})
            free = [shard for shard in range(shards) if shard not in busy] if len(busy) < shards else []
            self.shard = random.choice(free) if free else random.randrange(shards)
            busy[self.shard] = busy.get(self.shard, 0) + 1
            return self.shard


def counter_add(
    transaction: TransactWrite,
    *,
    key: str,
    delta: int,
    member: str | None = None,
    shard: int | None = None,
    flag: bool = True,
) -> None:
    """Add `delta` to the counter and (unless `flag` is False) raise its due flag, inside `transaction`.

    No read, no condition: an ADD on the member's shard and `if_not_exists` sets on the
    counter's `counter_totals` item, so the change and its scheduled aggregation commit
    together or not at all. Likes pass `flag=False`: the flag item is shared by every
    liker, so the like's fold raises it instead (notifications/like_fold/).
    The shard: `shard` if given (likes pass a `ShardPick`'s), else the member's stable
    shard; the sum of every shard stays exact whichever shard a change or its undo hits.
    """
    if shard is None:
        shard = counter_shard_for(key=key, member=member or "")
    transaction.update(CounterShard(counter_key=key, shard=shard), actions=[CounterShard.count.add(delta)])
    if flag:
        counter_due_flag_add(transaction, key=key)


def counter_due_flag_add(transaction: TransactWrite, *, key: str) -> None:
    """Raise the counter's due flag inside `transaction` (never fails a condition)."""
    transaction.update(CounterTotal(key), actions=_due_flag_actions(key, clock.now()))


def counter_due_flag_raise(*, key: str) -> None:
    """Raise the counter's due flag with one plain UpdateItem, after the change it follows committed.

    Idempotent (every action is `if_not_exists` or a constant): raising it twice, or after
    the aggregator took the flag, schedules at most one more aggregation.
    """
    from project.dynamo.transactions import write_retrying

    write_retrying(
        lambda: CounterTotal(key).update(actions=_due_flag_actions(key, clock.now())), what="counter_due_flag"
    )


# A process grows one counter at most this often: the conflicts of one burst, seen by
# many threads at once, double the shard count once, not once per thread.
SHARD_GROWTH_INTERVAL = 0.1
SHARD_GROWTH_FACTOR = 4
_grown_at: OrderedDict[str, float] = OrderedDict()


def counter_contended(*, key: str, at_least: int = 0, current: int | None = None) -> int:
    """A write of this counter met a transaction conflict or throttling: spread new writes wider.

    Multiplies the counter's shard count by SHARD_GROWTH_FACTOR (bounded by
    COUNTER_SHARDS_MAX) with one conditional UpdateItem on its `counter_totals` item
    (condition: the stored count is smaller, so concurrent growers never shrink it);
    a like counter's count is then also written onto its comment item, which the next
    like reads (`_comment_like_shards_raise`: a second UpdateItem, same condition).
    This process uses the new count at once; other processes: a like at its next read of
    the comment, a view within SHARD_OVERRIDE_CACHE_SECONDS. Reads sum every shard, so no
    count moves or is lost. Best effort: if an update fails (the item is busy,
    throttled) this process keeps the larger count and the next conflict writes it
    again. If the stored count is already as large (another process grew it), this
    process reads it, uses it, and copies it onto the comment (which heals a comment
    that does not carry its counter's count yet). Staff may still set any count.
    `current`: the shard count the caller writes with (a like: from its comment, so no
    read is needed); without it, the override is read (or taken from this process's cache).
    `at_least`: this process has that many writes of the counter in flight, so grow to
    at least that many shards whenever it has fewer. Returns the shard count this
    process now writes with.
    """
    current = counter_shard_count(key=key) if current is None else max(current, _override_known(key) or 0)
    now = clock.monotonic()
    last = _grown_at.get(key)
    recently = last is not None and now - last < SHARD_GROWTH_INTERVAL
    if current >= settings.COUNTER_SHARDS_MAX or (recently and current >= at_least):
        return current
    _remember(_grown_at, key, now)
    grown = min(settings.COUNTER_SHARDS_MAX, max(current * SHARD_GROWTH_FACTOR, at_least))
    # This process spreads at once (every thread retrying right now), before the write lands.
    _override_remember(key, grown)
    kind, object_id = counter_key_parts(key)
    try:
        CounterTotal(key).update(
            actions=[
                CounterTotal.shards.set(grown),
                CounterTotal.kind.set(kind),
                CounterTotal.object_id.set(object_id),
            ],
            condition=CounterTotal.shards.does_not_exist() | (CounterTotal.shards < grown),
        )
        logger.info("counter %s met contention: new writes now spread over %d shards", key, grown)
    except UpdateError as error:
        if not condition_failed(error):
            # The item is busy or throttled: keep spreading here; the next conflict writes it.
            logger.info("counter %s: shard growth to %d not stored yet (%s)", key, grown, error.cause_response_code)
        else:
            with _lock:  # another process stored as many or more: use that
                _shard_overrides.pop(key, None)
            grown = counter_shard_count(key=key)
    if kind == LIKES:
        _comment_like_shards_raise(comment_id=object_id, shards=grown)
    return grown


def _flag_raise(key: str) -> float:
    """Raise the due flag (one UpdateItem) and return the pending flag's `changed_at`."""
    item = CounterTotal(key)
    item.update(actions=[*_due_flag_actions(key, clock.now()), CounterTotal.relied_on.set(True)])
    changed_at = float(item.changed_at)
    _remember(_flag_seen, key, changed_at)
    return changed_at


def counter_increment(*, key: str) -> None:
    """Add 1 to a counter outside any transaction (page views): one UpdateItem on a random shard.

    A hot counter's flag item is not written on every view (it would be the one hot item
    sharding is there to avoid): after its increment committed, a writer raises the flag
    only if this process has not seen a pending one within `flag_reuse_seconds()`. The
    check runs *after* the commit, and the aggregator reads shards no earlier than
    `flag_settle_seconds()` after the flag's `changed_at`, so a view that relied on a
    flag is always in that flag's sum.

    Twice: counts twice (a view is a view). Dies between the increment and the flag:
    the count is exact, but the ranking shows it only after the counter's next change.
    """
    shard = CounterShard(counter_key=key, shard=random.randrange(counter_shard_count(key=key)))
    shard.update(actions=[CounterShard.count.add(1)])
    counter_due_flag_rely(key=key)


def counter_due_flag_rely(*, key: str) -> None:
    """After a change of the counter committed: raise its due flag (one UpdateItem) unless this
    process saw a pending one within `flag_reuse_seconds()`, as a view does (`counter_increment`):
    a hot counter's flag item is not written by every change."""
    seen = _flag_seen.get(key)
    if seen is None or clock.now() >= seen + flag_reuse_seconds():
        _flag_raise(key)


def counter_set_shards(*, key: str, shards: int) -> int:
    """Set how many shards new writes of one counter spread over (staff, for a hot counter).

    Nothing is moved: existing shard items keep their counts and reads sum every shard,
    so the value is unchanged. A like counter's count is written onto its comment first
    (as given, larger or smaller; NotFound if there is no such comment), so the next like
    of the comment, in any process, uses it; then onto the counter's `counter_totals`
    item, which views, the admin and `counter_shards` read (other processes within
    SHARD_OVERRIDE_CACHE_SECONDS). Costs an UpdateItem of each; the comment's is
    described in `_comment_like_shards_raise`. Idempotent; concurrent calls: the last
    one wins; dies between the two writes: the likes use the new count, views and the
    admin the old one until it is set again.
    """
    kind, object_id = counter_key_parts(key)
    if kind not in KINDS or not object_id:
        raise ApplicationError(gettext("Unknown counter %(key)s.") % {"key": repr(key)}, field="key")
    if not 1 <= shards <= settings.COUNTER_SHARDS_MAX:
        raise ApplicationError(
            gettext("Shards must be 1..%(counter_shards_max)s.") % {"counter_shards_max": settings.COUNTER_SHARDS_MAX},
            field="shards",
        )
    if kind == LIKES:
        try:
            Comment(object_id).update(actions=[Comment.like_shards.set(shards)], condition=Comment.comment_id.exists())
        except UpdateError as error:
            if condition_failed(error):
                raise NotFound(gettext("No such comment.")) from None
            raise
    CounterTotal(key).update(
        actions=[CounterTotal.shards.set(shards), CounterTotal.kind.set(kind), CounterTotal.object_id.set(object_id)]
    )
    _override_remember(key, shards)
    logger.info("counter %s now spreads new writes over %d shards", key, shards)
    return shards


def counter_like_overrides_copy() -> tuple[int, int]:
    """Copy every stored like-counter override onto its comment item (`counter_shards --copy-like-overrides`).

    For overrides stored on `counter_totals` alone (the comment carries none): a like of
    such a comment writes with LIKE_COUNTER_SHARDS until its next conflict grows it again,
    or until this copies the override. One Scan of `counter_totals` (one item per counter:
    an operator's one-off, never on a request path) and one conditional UpdateItem per
    override found (`_comment_like_shards_raise`: never lowers what a comment carries).
    The Scan is strongly consistent, so an override set a moment before is copied too.
    Idempotent (dies half way: run it again); concurrent with growth: the larger count
    stays. Returns (found, written).
    """
    found = written = 0
    for total in CounterTotal.scan(
        filter_condition=(CounterTotal.kind == LIKES) & CounterTotal.shards.exists(),
        attributes_to_get=["counter_key", "object_id", "shards"],
        consistent_read=True,
    ):
        found += 1
        written += _comment_like_shards_raise(comment_id=total.object_id, shards=int(total.shards))
    return found, written


def counter_value(*, key: str, consistent: bool = True) -> int:
    """The counter's exact value: one Query over its items (the base item and the shard items
    written since the last compaction), strongly consistent unless `consistent=False` (half
    the read units, for list pages and polling, where a value a second old will do: such
    a value is also shared by the process's requests for SHARED_READ_SECONDS,
    project/dynamo/shared_reads.py)."""
    if not consistent:
        return _shared_values.get(key, lambda: _counter_sum(key, consistent=False))
    return _counter_sum(key, consistent=True)


def _counter_sum(key: str, *, consistent: bool) -> int:
    total = sum(shard.count for shard in CounterShard.query(key, consistent_read=consistent))
    # A shard can dip below zero when the shard count changed between a like and its
    # undo; the sum of shards is still exact, and never shown below zero.
    return max(0, int(total))


def counter_values(*, keys: list[str], consistent: bool = True, exact: Collection[str] | None = None) -> dict[str, int]:
    """Values of several counters, queried concurrently (one Query each); those in `exact`
    strongly consistently whatever `consistent` says."""
    unique = list(dict.fromkeys(keys))
    exact = exact or ()

    def value(key: str) -> int:
        return counter_value(key=key, consistent=consistent or key in exact)

    if len(unique) <= 1:
        return {key: value(key) for key in unique}
    values = pool(READS).map(value, unique)
    return dict(zip(unique, values, strict=True))
