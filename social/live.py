"""The live change log: what lets an open page's poll answer "nothing changed" without reading.

Writers put a small `live_changes` item (social/models.py `LiveChange`) after a change that
an open page follows has committed: `u:<user_id>` when that person's badge moved, `c:<comment_id>`
when a comment's like count (and so someone's heart on it) moved. Every web process keeps the
last few minutes of those signals in memory (`ChangeLog`), refreshed by the polls themselves,
at most every LIVE_LOG_REFRESH seconds, with one eventually consistent Query per part of the
table. A poll carries a cursor (its ETag) saying up to when the caller's page reflects every
change; when none of the ids it follows has a signal since, it is answered 304 without reading
anything of the caller's (notifications/apis.py `LiveApi`, docs/explanation/live-updates.md "Live updates").

Times are epoch milliseconds. A signal's `at` is taken after its change committed, so a read
made after `at` (strongly consistent) reflects the change. LIVE_SIGNAL_LAG bounds how late a
signal can show in a Query after its `at`: the put's own latency, clock skew between machines
and the Query's eventual consistency; a signal later than that is caught by the full answer a
page gets at least every LIVE_FULL_EVERY seconds, as is a signal never put (a writer dying
between its commit and its put, or the put failing).
"""

from __future__ import annotations

import hashlib
import logging
import random
import re
import threading
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings

from project.clock import clock
from social.models import LiveChange

logger = logging.getLogger(__name__)

LIVE_SIGNAL_IDS_MAX = 100  # ids per item: a few KB at most
LIVE_CHANGE_TTL = timedelta(minutes=10)  # far beyond what any process reads back
# Margin for clock skew between the machine that read and the one that signalled, applied
# to a strongly consistent answer's cursor.
CLOCK_SKEW_MS = 250


def live_user(user_id: str) -> str:
    """The id of a person's badge in the change log."""
    return f"u:{user_id}"


def live_comment(comment_id: str) -> str:
    """The id of a comment's like count (and the hearts on it) in the change log."""
    return f"c:{comment_id}"


def _ms(seconds: float) -> int:
    return int(seconds * 1000)


def signal_lag_ms() -> int:
    return _ms(settings.LIVE_SIGNAL_LAG)


def full_every_ms() -> int:
    return _ms(settings.LIVE_FULL_EVERY)


def _keep_ms() -> int:
    """How far back a process keeps (and first reads) signals: any cursor older gets a full answer anyway."""
    return full_every_ms() + 2 * signal_lag_ms()


# --- writers -------------------------------------------------------------------

signal_failures = 0  # puts that failed in this process (logged; the poll's safety net covers them)


def live_signal(ids: Iterable[str]) -> None:
    """Put the signals for `ids` (`live_user`, `live_comment`) into the change log; never raises.

    Call it after the change committed, outside any transaction. One put of a new item per
    LIVE_SIGNAL_IDS_MAX ids, under a fresh key in a random part: no condition, no conflict.
    Twice: a second signal, which at most makes a poll read once more. Concurrently: two items.
    Dies before the put, or the put fails (logged and counted, not raised: the change itself is
    done): pages following those ids show it at their next full answer, within LIVE_FULL_EVERY.
    """
    global signal_failures
    for item in live_signal_items(ids):
        try:
            item.save()
        except Exception as error:
            signal_failures += 1
            logger.warning("live signal of %d id(s) not put (%s): pages catch up in full", len(item.ids), error)


def live_signal_items(ids: Iterable[str]) -> list[LiveChange]:
    """The change-log items that signal `ids`, to put as `live_signal` does (a caller may put them
    with other plain writes in one BatchWriteItem: social/fold_effects.py)."""
    wanted = sorted({each for each in ids if each})
    items = []
    for start in range(0, len(wanted), LIVE_SIGNAL_IDS_MAX):
        at = f"{clock.now_ms():013d}#{uuid.uuid4().hex[:8]}"
        part = str(random.randrange(max(1, int(settings.LIVE_CHANGE_PARTS))))
        chunk = set(wanted[start : start + LIVE_SIGNAL_IDS_MAX])
        items.append(LiveChange(part, at, ids=chunk, expires_at=clock.utcnow() + LIVE_CHANGE_TTL))
    return items


# --- the reader ----------------------------------------------------------------


class ChangeLog:
    """This process's copy of the recent signals: id -> the newest `at` seen.

    Refreshed on demand (`refresh`), by whichever poll finds it older than LIVE_LOG_REFRESH;
    one thread queries while the others answer from what is there (single flight). A refresh
    at time R reads each part for `at >= previous R - LIVE_SIGNAL_LAG` (the first one: the last
    LIVE_FULL_EVERY + 2 x LIVE_SIGNAL_LAG), after which the log holds every signal with
    `at <= R - LIVE_SIGNAL_LAG` (`complete_ms`) back to `known_from_ms`. An idle process reads
    nothing. A failed refresh leaves the log as it was; polls then get full answers.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._refreshing = False
        self._newest: dict[str, int] = {}
        self.refreshed_ms: int | None = None  # when the last successful refresh started
        self.known_from_ms: int | None = None
        self.reads = 0  # Queries made (benchmarks)

    def forget(self) -> None:
        """Start empty (tests, benchmarks): the next poll reads the log afresh."""
        with self._lock:
            self._newest.clear()
            self.refreshed_ms = self.known_from_ms = None
            self.reads = 0

    @property
    def complete_ms(self) -> int | None:
        return None if self.refreshed_ms is None else self.refreshed_ms - signal_lag_ms()

    def refresh(self) -> None:
        """Read what was signalled since the last refresh, unless one is under way or happened
        less than LIVE_LOG_REFRESH ago. Errors are logged; the log stays as it was."""
        now = clock.now_ms()
        with self._lock:
            fresh = self.refreshed_ms is not None and 0 <= now - self.refreshed_ms < _ms(settings.LIVE_LOG_REFRESH)
            if fresh or self._refreshing:
                return
            if self.refreshed_ms is not None and now < self.refreshed_ms:  # the clock went back (tests)
                self._newest.clear()
                self.refreshed_ms = self.known_from_ms = None
            self._refreshing = True
            start = now - _keep_ms() if self.refreshed_ms is None else self.refreshed_ms - signal_lag_ms()
        try:
            found = self._read(start)
        except Exception as error:
            logger.warning("live change log not refreshed (%s): polls answer in full meanwhile", error)
            with self._lock:
                self._refreshing = False
            return
        with self._lock:
            for each, at in found:
                if at > self._newest.get(each, -1):
                    self._newest[each] = at
            horizon = now - _keep_ms()
            if len(self._newest) > 1000:
                for each in [key for key, at in self._newest.items() if at < horizon]:
                    del self._newest[each]
            if self.known_from_ms is None:
                self.known_from_ms = start
            else:
                self.known_from_ms = max(self.known_from_ms, horizon)
            self.refreshed_ms = now
            self._refreshing = False

    def _read(self, start_ms: int) -> list[tuple[str, int]]:
        found: list[tuple[str, int]] = []
        for part in range(max(1, int(settings.LIVE_CHANGE_PARTS))):
            self.reads += 1
            for item in LiveChange.query(str(part), LiveChange.at >= f"{max(0, start_ms):013d}"):
                at = int(item.at.split("#", 1)[0])
                found.extend((each, at) for each in item.ids or ())
        return found

    def pending(self, cursor: Cursor, ids: Iterable[str]) -> set[str]:
        """Those of `ids` with a signal that `cursor` does not reflect (as far as the log knows)."""
        with self._lock:
            return cursor.pending(ids, self._newest)

    def vouches(self, since_ms: int, now_ms: int) -> bool:
        """Whether the log can say what changed since `since_ms`: it reaches back that far and
        was refreshed lately (within LIVE_LOG_REFRESH plus one more LIVE_SIGNAL_LAG)."""
        with self._lock:
            if self.refreshed_ms is None or self.known_from_ms is None:
                return False
            recent = now_ms - self.refreshed_ms <= _ms(settings.LIVE_LOG_REFRESH) + signal_lag_ms()
            return recent and since_ms >= self.known_from_ms


change_log = ChangeLog()


class SharedCounts:
    """Like counts this process read for the live poll, kept while the change log says they hold
    (or, with `signal=live_user`, unread badges a page read: `shared_badges`).

    A count read at T (strongly or not) is served again to any viewer asking with a cursor the
    log vouches for, as long as the log has no signal for it since T (less CLOCK_SKEW_MS after a
    strong read, LIVE_SIGNAL_LAG after an eventual one) and it is younger than half of
    LIVE_FULL_EVERY. The answer's cursor then starts no later than T, so whatever changed since
    is still looked for; a full answer after a stale cursor reads everything again.
    """

    MAX = 10_000

    def __init__(self, signal: Callable[[str], str] | None = None) -> None:
        self._lock = threading.Lock()
        self._counts: dict[str, tuple[int, int, int]] = {}  # key -> (count, read ms, reflects before ms)
        self._signal = signal or live_comment  # the change log's id for a key

    def forget(self) -> None:
        with self._lock:
            self._counts.clear()

    def put(self, counts: dict[str, int], *, read_ms: int, strong: Iterable[str]) -> None:
        exact = set(strong)
        with self._lock:
            if len(self._counts) > self.MAX:
                self._counts.clear()
            for comment_id, count in counts.items():
                reflects = read_ms - (CLOCK_SKEW_MS if comment_id in exact else signal_lag_ms())
                self._counts[comment_id] = (count, read_ms, reflects)

    def valid(self, comment_ids: Iterable[str], *, now_ms: int) -> dict[str, tuple[int, int, int]]:
        """The counts of `comment_ids` that still hold: (count, read ms, reflects-before ms)."""
        found = {}
        with self._lock:
            entries = {each: self._counts.get(each) for each in comment_ids}
        for comment_id, entry in entries.items():
            if entry is None or not 0 <= now_ms - entry[1] <= full_every_ms() // 2:
                continue
            if not change_log.vouches(entry[2], now_ms):
                continue
            probe = Cursor(entry[2], entry[1], "")
            if not change_log.pending(probe, [self._signal(comment_id)]):
                found[comment_id] = entry
        return found


shared_counts = SharedCounts()
# Unread badges a page of this process read, by user id (signalled as `live_user` on every change).
shared_badges = SharedCounts(signal=live_user)


def _log_vouches_for_pages(now_ms: int) -> bool:
    """Whether a page may show what this process keeps: the log refreshed (if due) within half a
    LIVE_SIGNAL_LAG, so a signal it does not hold yet is still looked for by the page's own
    cursor (`page_cursor` reaches back 2 x LIVE_SIGNAL_LAG from the render), as long as the page
    renders within half a LIVE_SIGNAL_LAG of this call."""
    change_log.refresh()
    refreshed = change_log.refreshed_ms
    return refreshed is not None and now_ms - refreshed <= signal_lag_ms() // 2


def page_counts_kept(comment_ids: Iterable[str], *, now_ms: int) -> dict[str, int]:
    """The like counts of `comment_ids` a list page shows without reading them: those that
    `shared_counts` holds and no signal touched since (as a poll past a vouched cursor is
    answered). Refreshes the log if due; nothing is kept unless `_log_vouches_for_pages`."""
    if not _log_vouches_for_pages(now_ms):
        return {}
    return {comment_id: entry[0] for comment_id, entry in shared_counts.valid(comment_ids, now_ms=now_ms).items()}


def page_badge_kept(user_id: str, *, now_ms: int) -> int | None:
    """The unread badge a page shows `user_id` without reading it: the one a page of this process
    read for them within half of LIVE_FULL_EVERY, if no signal for them came since (every change
    of a badge signals `live_user`: folds that change a notification, feed writes that move an
    unread count, mark-reads), under the same rule as `page_counts_kept`; None: read it."""
    if not _log_vouches_for_pages(now_ms):
        return None
    kept = shared_badges.valid([user_id], now_ms=now_ms).get(user_id)
    return kept[0] if kept is not None else None


def live_log_forget() -> None:
    change_log.forget()
    shared_counts.forget()
    shared_badges.forget()


# --- cursors -------------------------------------------------------------------


STRONG_TAGS_MAX = 8  # ids a cursor can name as read strongly; more hits are simply read again


def id_tag(each: str) -> str:
    """A short tag of a change log id, for a cursor's list of ids read strongly."""
    return hashlib.blake2s(each.encode(), digest_size=3).hexdigest()


def viewer_tag(user_id: str | None) -> str:
    """A short tag of who asks, so that a cursor never vouches for another person's badge."""
    return hashlib.blake2s((user_id or "-").encode(), digest_size=4).hexdigest()


@dataclass(frozen=True)
class Cursor:
    """What a page's state reflects: every change signalled before `since_ms`, and, for the ids
    tagged in `strong` (read strongly by the answer that made it), every change signalled before
    `strong_ms`; its last full answer (or the page itself) was read at `full_ms`. Bound to the
    viewer (`viewer`, a tag). The ETag is `"<since>.<full>.<viewer>[.<strong_ms>.<tags>]"`, hex."""

    since_ms: int
    full_ms: int
    viewer: str
    strong_ms: int = 0
    strong: frozenset[str] = frozenset()

    def etag(self) -> str:
        tail = f".{self.strong_ms:x}.{''.join(sorted(self.strong))}" if self.strong else ""
        return f'"{self.since_ms:x}.{self.full_ms:x}.{self.viewer}{tail}"'

    def pending(self, ids: Iterable[str], newest: dict[str, int]) -> set[str]:
        """Those of `ids` whose newest signal (`newest`) this cursor does not reflect."""
        found = set()
        for each in ids:
            at = newest.get(each, -1)
            if at >= self.since_ms and not (at < self.strong_ms and id_tag(each) in self.strong):
                found.add(each)
        return found


_TAGS = re.compile(f"(?:[0-9a-f]{{6}}){{0,{STRONG_TAGS_MAX}}}")


def _hex(text: str) -> int:
    if not text or len(text) > 12:
        raise ValueError(text)
    return int(text, 16)


def cursor_parse(header: str | None, *, user_id: str | None) -> Cursor | None:
    """The cursor in an If-None-Match header (weak or strong, the first of a list that is this
    viewer's), or None when absent, malformed, or another viewer's. Never raises."""
    if not header or len(header) > 300:
        return None
    tag = viewer_tag(user_id)
    for candidate in header.split(","):
        parts = candidate.strip().removeprefix("W/").strip('"').split(".")
        if len(parts) not in (3, 5) or parts[2] != tag:
            continue
        try:
            since, full = _hex(parts[0]), _hex(parts[1])
            strong_ms, tags = (_hex(parts[3]), parts[4]) if len(parts) == 5 else (0, "")
        except ValueError:
            continue
        if not _TAGS.fullmatch(tags):
            continue
        strong = frozenset(tags[i : i + 6] for i in range(0, len(tags), 6))
        return Cursor(since, full, tag, strong_ms, strong)
    return None


@dataclass(frozen=True)
class Verdict:
    """A poll's decision: `unchanged` (answer 304 with `cursor`), else read, strongly the `changed` ids."""

    unchanged: bool
    changed: frozenset[str]
    cursor: Cursor | None = None
    vouched: bool = False  # the log vouches for every id outside `changed`: unchanged since the cursor


def live_verdict(*, cursor: Cursor | None, ids: list[str], now_ms: int) -> Verdict:
    """Whether a poll for `ids` with `cursor` can be answered "not modified", refreshing the
    log if due. Reads nothing of the caller's. A full answer is due when the cursor is missing,
    older than LIVE_FULL_EVERY, or reaches back past what the log vouches for; it reads the
    `changed` ids strongly."""
    if cursor is None or not 0 <= now_ms - cursor.full_ms <= full_every_ms():
        return Verdict(False, frozenset())
    change_log.refresh()
    if not change_log.vouches(cursor.since_ms, now_ms):
        return Verdict(False, frozenset())
    changed = change_log.pending(cursor, ids)
    if changed:
        return Verdict(False, frozenset(changed), vouched=True)
    since = max(cursor.since_ms, change_log.complete_ms or cursor.since_ms)
    strong = cursor.strong if since < cursor.strong_ms else frozenset()
    kept = Cursor(since, cursor.full_ms, cursor.viewer, cursor.strong_ms if strong else 0, strong)
    return Verdict(True, frozenset(), kept, vouched=True)


def cursor_after_read(
    *,
    read_ms: int,
    user_id: str | None,
    strong: Iterable[str],
    all_strong: bool,
    shared: Iterable[tuple[int, int, int]] = (),
) -> Cursor:
    """The cursor of a full answer whose reads started at `read_ms`. A strongly consistent read
    reflects every change signalled before it (less CLOCK_SKEW_MS); an eventually consistent one
    every change signalled LIVE_SIGNAL_LAG before it; a count served from `SharedCounts`
    (`shared`: its entries) every change signalled before it was read, and, as the log holds no
    signal for it since, up to where the log is complete. The `strong` ids (those a signal
    made the answer read strongly) are named, so that their signal does not make the next poll
    read again."""
    strong_ms = read_ms - CLOCK_SKEW_MS
    since = strong_ms if all_strong else read_ms - signal_lag_ms()
    full = read_ms
    complete = change_log.complete_ms or 0
    for _, read, reflects in shared:
        # No signal for it from `reflects` to where the log is complete: it reflects that far.
        since, full = min(since, max(reflects, complete)), min(full, read)
    tags = frozenset(id_tag(each) for each in sorted(strong)[:STRONG_TAGS_MAX]) if since < strong_ms else frozenset()
    return Cursor(since, full, viewer_tag(user_id), strong_ms if tags else 0, tags)


def page_cursor(*, user_id: str | None) -> str:
    """The cursor of a page being rendered now: its counts and badge were read a moment ago,
    eventually consistently, so it reaches back LIVE_SIGNAL_LAG and one more for the page's
    own time between its reads and its render."""
    now = clock.now_ms()
    return Cursor(now - 2 * signal_lag_ms(), now - signal_lag_ms(), viewer_tag(user_id)).etag()
