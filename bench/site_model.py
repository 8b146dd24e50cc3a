"""The floors of bench/costs.py's operations, and the cost model of a whole site (`costs.py --site`).

Units as AWS charges them: a write is 1 unit per KB of the item (2 in a transaction), and
each secondary index it changes pays again (an index entry whose key changes is a delete
and a put: 2, doubled in a transaction); a read is 1 unit per 4 KB strongly consistent, 0.5
eventually consistent (GSI reads always are), and a read that finds nothing costs as much
as one that finds a small item (DynamoDB Local reports 0 for those; the benches' meter adds
them, project/operations/usage.py `aws_units`).
"""

from __future__ import annotations

from _setup import PRICE_PER_MILLION_READS, PRICE_PER_MILLION_WRITES

# (read, write) floors: the least the writes and reads each operation must make can cost.
FLOORS: dict[str, tuple[float, float]] = {
    # The comment + its timeline, author and profile GSI entries in one transaction (4 x 2),
    # and its activity line + by_day entry (2 x 2). Reads: none needed.
    "post a comment": (0, 12),
    # A like must commit three items atomically: its row (the one-like-per-person
    # constraint), one counter shard (the exact count) and its outbox event (so that
    # nothing it causes can be lost): 3 x 2 units in a transaction, + the like row's entry in
    # the keys-only `by_user` index (2 in the transaction: a person's likes found for their
    # account's deletion and export without a Scan). The answer's count is one consistent
    # Query (1), the comment's visibility one GetItem (1).
    "like, synchronous": (2, 8),
    # + the fold, plain writes: the notification (1) and its by_num_likes LSI entry, whose
    # key (num_likes) moves (2); the badge item (1) and its by_count LSI entry (2); the
    # liker's marker (1); the counter's due flag (1) and its entry in the sparse `due` index
    # (1); the activity line (1) and its by_day entry (1); the event's delete (1); the live
    # signal for open pages (1: a put into the change log). Less needs other index shapes (a badge index that
    # a +1 does not move), or giving up the exact, crash-proof notification. Its reads, all
    # consistent (1 each): the comment's events, the comment (still visible?), the liker's
    # row (still liking?), the notification, the badge, the liker's marker (charged even when
    # absent) and the counter's shards; + the folder's Scans for pending events (0.5 each,
    # three in the bench's fold-until-idle); + what the author chose, once per batch: their
    # preferences (1), the thread's mute (1) and their block list (1, read again after a
    # commit that notified someone, so a block racing the fold retracts: 1).
    "like, all-in (+ its fold)": (14.5, 21),
    # The aggregator, once per change of a quiet counter (a busy one: once per
    # COUNTER_AGGREGATION_DELAY, whatever its changes): the claim (1) moves the counter's
    # `due` index entry (2); the total (1) leaves the `due` index (1) and moves its
    # `ranking_by_total` entry (2: 1 for a counter's first total). Reads: the shards (1).
    # The ranking index carries only what it shows, so the flag, the claim and the clear
    # write no ranking entry (with every attribute projected: +1 each).
    "aggregation of a liked comment's count": (1, 7),
    "aggregation of a viewed comment's count": (1, 7),
    "unlike, synchronous": (2, 8),
    # A reaction commits three items atomically, as a like: its row (one of each reaction per
    # person), one shard of the comment's reaction counter and its event (3 x 2), + the row's
    # keys-only `by_user` index entry (2): 8, a like's 8. Reads: the comment (1), the answer's
    # counts (1) and the reactor's rows of the names counted (1); the counter's shard count (1)
    # once per 30 s per process.
    "reaction, synchronous": (3, 8),
    "reaction taken back, synchronous": (3, 8),
    # + the fold: as a like's, but it reads the reactor's six rows (6, a like's 1) and writes no
    # activity line (2 less); the due flag's `due` entry (1) only on a counter not due yet
    # (here it was: the set-up's reactions raised it).
    "reaction, all-in (+ its fold)": (19.5, 18),
    "reaction taken back, all-in (+ its fold)": (16.5, 18),
    # As a like count's; its first total writes 1 ranking entry, not a moved one (2).
    "aggregation of a reacted-to comment's count": (1, 6),
    # + the fold: as a like's, without the marker (kept through the unlike), and with the
    # author's block list (2) but no preferences read (nobody is notified of an unlike).
    "unlike, all-in (+ its fold)": (11.5, 20),
    # The comment (1), its like and view counts (consistent: 2), its replies page (GSI, 0.5)
    # and each reply's count (10 eventually consistent Queries: 5); the view counter's shard
    # (1) once an hour per viewer; its activity line (2).
    "comment page view (counted, anonymous)": (8.5, 3),
    # One Query per day shard of the timeline GSI (10 x 0.5), the day list (0.5), per comment
    # shown its count (20 eventually consistent Queries, 0.5 each even for a count of 0:
    # 10; exact only for the comments the viewer just liked), the header badge (0.5), and
    # the viewer's like rows of the comments that have likes (0.5 each, eventually
    # consistent; consistent for those the viewer just changed): 16 + 0.5 per liked comment
    # shown, 21 for the bench's page (half its comments have likes).
    "timeline page": (21, 0),
    "inbox (API, a full feed)": (4, 0),  # the 5 KB feed item (2) + the shown page's sources
    "badge (API unread count)": (1, 0),  # one consistent Query of a keys-only LSI
    "live poll, 5 comments on screen": (3, 0),  # badge + 5 counts, eventually consistent
    # The change log vouches that nothing the page follows changed: no read of the viewer's.
    "live poll, nothing changed (304)": (0, 0),
    # The changed count, the viewer's heart on it and the badge strongly (1 + 1 + 1); the 4 other
    # counts are the ones the process read for other viewers since, which no signal touched
    # (social/live.py `SharedCounts`), the other hearts did not move: neither is read.
    "live poll, a count on screen changed (200)": (3, 0),
    # The badge, 5 counts and 5 hearts (the bench's comments all have likes), eventually consistent.
    "live poll, full answer (5 comments, hearts)": (5.5, 0),
    # The feed item (5 KB) rewritten in a transaction (10) with its unread count (2), which
    # at 0 leaves the sparse by_count index (a delete, 2 in a transaction).
    "mark all read (after one new entry)": (2, 14),
    "feed event into a full feed": (2, 10),
    # The preferences item, read consistently (a person sees their own save): 1, billed even
    # when the person never saved any (defaults).
    "preferences (API GET, never saved)": (1, 0),
    # One UpdateItem of the small preferences item, SET on the flag alone (no read first).
    "preferences saved (API PATCH, one flag)": (0, 1),
    # The comment, read to find its thread (1); the subscription item (1) and its `by_user`
    # index entry (1).
    "mute a thread (API PUT)": (1, 2),
    # The sender's claim of the queue item (1, its `by_due` LSI entry moves: 2); the checks, all
    # consistent: an earlier ledger line (1, billed when absent), the feed (the entry still
    # unread? 1 for a small feed, 2 at 5 KB), the preferences (1) and the thread's mute (1);
    # the ledger line put (1 + its `by_source` entry 1) and marked sent (1 + 1); the two limit
    # counts (2); the entry's "mailed" mark, in a transaction so that replies rolled into the
    # same unread entry send no second mail (2); the queue item's delete (1 + LSI 1). The mail
    # itself is billed by the mail service (SES: $0.10 per 1,000), about 11 times this.
    "notification mail sent (sender, per mail)": (5, 13),
    # The sender's claim of the queue item (1, its `by_due` LSI entry moves: 2); the checks, all
    # consistent: an earlier ledger line (1, billed when absent), the preferences (1), the feed
    # (the entry still unread? 1 for a small feed), the thread's state (1), the person's presence
    # (1, billed when absent); the browsers (1 Query); the ledger line put (1 + its `by_source`
    # entry 1) and marked sent (1 + 1); the browser's `last_used_at` (1); the queue item's delete
    # (1 + LSI 1). Measured beyond it: the comment read to find its thread (1), the blocked and
    # muted people's Query (0.5). The push itself goes to the browser vendor's push service, free.
    "push sent (sender, per push)": (6, 10),
}

# --- the site ------------------------------------------------------------------

SES_PRICE_PER_MAIL = 0.10 / 1000  # Amazon SES, outbound e-mail

# What one daily active person does on an average day (stated, not measured: change to taste).
DAILY_MIX: dict[str, float] = {
    "timeline page": 10,
    "comment page view (counted, anonymous)": 8,
    "like, all-in (+ its fold)": 5,
    "unlike, all-in (+ its fold)": 0.5,
    # Each like, unlike and counted view changes a counter the aggregator then sums into its
    # total: charged once per change (a comment liked or viewed by one person at a time;
    # changes that land within COUNTER_AGGREGATION_DELAY of each other share one, so a busy
    # site pays less). The same for the other designs: the ranking is the same feature.
    "aggregation of a liked comment's count": 5.5,
    "aggregation of a viewed comment's count": 8,
    "post a comment": 0.3,
    "reply (the parent's author has a full feed)": 0.8,
    # A reply in a busier thread: its parent's author, a mention and three watchers hear of it.
    "reply notifying 5 (author, 1 mention, 3 watchers)": 0.2,
    # One person in five has e-mail on for replies or mentions and gets one such mail a day
    # (each also adds the queue item to the reply's feed write: in the reply's own line).
    "notification mail sent (sender, per mail)": 0.2,
    # One person in three has push on for replies, mentions or messages and gets two pushes a
    # day (each also adds the queue item to its event's feed write: in that event's own line).
    "push sent (sender, per push)": 0.7,
    "inbox (API, a full feed)": 3,
    "mark all read (after one new entry)": 1,
    "badge (API unread count)": 5,  # API clients; pages read the badge inside their own cost
    # Choices are made rarely: a settings visit a month, a mute or watch a fortnight. Each
    # notification batch reads the preferences it needs inside its own cost (a reply's
    # fan-out, a like's fold), so they are in those lines already.
    "preferences (API GET, never saved)": 1 / 30,
    "preferences saved (API PATCH, one flag)": 1 / 30,
    "mute a thread (API PUT)": 1 / 14,
    # 20 minutes a day with a visible tab: one poll every 2 s (600), conditional (If-None-Match).
    # A changed answer when something on screen changed (a like on one of the comments shown,
    # the badge: once a minute, say: 20); a full one when the last full answer is LIVE_FULL_EVERY
    # (120 s) old, and for comments scrolled into view on a page older than that (10, say).
    "live poll, nothing changed (304)": 570,
    "live poll, a count on screen changed (200)": 20,
    "live poll, full answer (5 comments, hearts)": 10,
    # One staff broadcast a week to everyone.
    "delivered target (a full feed; dispatch only)": 1 / 7,
}

# Two common alternative designs for the same operations (units of one operation, read and write):
# One-transaction like: a like is one transaction on the like row (2), the count item (2), the author's
# shared notification item with the liker appended (2, + its num_likes LSI entry moved: 4)
# and the unread count item (2, + LSI 4): 16 units while the item stays under 1 KB, 20 with
# the same activity-log line this site writes (in its transaction: 2 + by_day 2); every
# liker of a comment writes the same two items (on AWS, concurrent likes cancel each other),
# and the liker list grows ~8 bytes a liker, so a comment with 1,000 unread likers makes
# each like rewrite an 8 KB item: 2 + 2 + 3 x 2 x 8 + 6 + 4 = 62 units.
# Full-content feed: the feed item holds every entry's full text (~98 KB for 100 entries); each
# event reads it (25 units consistent) and rewrites it (98 units plain put); the figures
# are this project's own measurements of that format (docs/explanation/costs.md).
SEED_000 = {
    "like, all-in (+ its fold)": (1, 20),
    "unlike, all-in (+ its fold)": (1, 20),
}
SEED_002 = {
    "reply (the parent's author has a full feed)": (13, 122),
    "feed event into a full feed": (13, 100),
    "delivered target (a full feed; dispatch only)": (13, 100),
    "inbox (API, a full feed)": (27.5, 0),
    "mark all read (after one new entry)": (25, 100),
}

# Always on, whatever the traffic: the workers' polls of an idle site (each read billed at
# its minimum; `bench/health.py` measures the same calls) and their heartbeats.
# (label, times a day, read units each, write units each)
ALWAYS_ON: list[tuple[str, float, float, float]] = [
    ("like folders polling (2, a Scan every 0.2 s)", 2 * 86_400 / 0.2, 0.5, 0),
    ("aggregator polling (10 due shards every 0.5 s)", 86_400 / 0.5, 10 * 0.5, 0),
    ("feed retries polling (4 Queries every 2 s)", 86_400 / 2, 4 * 0.5, 0),
    ("dispatcher polling (1 Query every 5 s)", 86_400 / 5, 0.5, 0),
    ("mail sender polling (4 shards every 5 s)", 86_400 / 5, 4 * 0.5, 0),
    # The push sender's due Queries are strongly consistent: 1 unit each, also when empty.
    ("push sender polling (4 Queries every 1 s)", 86_400 / 1, 4 * 1.0, 0),
    # One per program of project.operations.health_selectors.WORKERS.
    ("worker heartbeats (8 workers, every 5 s)", 8 * 86_400 / 5, 0, 1),
    # The live change log, read back by each web process while polls arrive: one Query per part
    # (LIVE_CHANGE_PARTS, 1) every LIVE_LOG_REFRESH (0.5 s), here 4 processes polled all day.
    ("live change log refreshes (4 web processes)", 4 * 86_400 / 0.5, 0.5, 0),
]

# --- the live channel, before and after the change log ----------------------
LIVE_BEFORE = {"live poll, 5 comments on screen": 600}  # every poll a full answer
LIVE_AFTER = (
    "live poll, nothing changed (304)",
    "live poll, a count on screen changed (200)",
    "live poll, full answer (5 comments, hearts)",
)
LIVE_ALWAYS_ON = ("live change log refreshes (4 web processes)",)
# Signal puts (1 WCU each, inside the measured lines of their writers): a fold per like or
# unlike, a feed write that moves a badge per reply recipient and message, a mark-read (the
# feed's and the likes'), per person and day from DAILY_MIX.
LIVE_SIGNALS_PER_PERSON = {
    "like, all-in (+ its fold)": 1,
    "unlike, all-in (+ its fold)": 1,
    "reply (the parent's author has a full feed)": 1,
    "reply notifying 5 (author, 1 mention, 3 watchers)": 5,
    "mark all read (after one new entry)": 2,
    "delivered target (a full feed; dispatch only)": 1,
}


def _dollars(read_units: float, write_units: float) -> float:
    return read_units / 1e6 * PRICE_PER_MILLION_READS + write_units / 1e6 * PRICE_PER_MILLION_WRITES


def _design(measured: dict[str, tuple[float, float]], overrides: dict[str, tuple[float, float]]):
    return {label: overrides.get(label, measured.get(label, (0.0, 0.0))) for label in DAILY_MIX}


def print_site_model(*, people: int, measured: dict[str, tuple[float, float]]) -> None:
    """Units per day and on-demand dollars a month for `people` daily active people doing DAILY_MIX."""
    designs = {
        "this design": _design(measured, {}),
        "seed 000 likes": _design(measured, SEED_000),
        "seed 002 feed": _design(measured, SEED_002),
    }
    print(f"\nA site with {people:,} daily active people, each doing per day:")
    for label, times in DAILY_MIX.items():
        print(f"  {times:8.2f} x {label}")
    print(f"\n{'where the money goes (this design)':<50} {'RCU/day':>14} {'WCU/day':>14} {'$/month':>10} {'share':>6}")
    rows, total = [], 0.0
    for label, times in DAILY_MIX.items():
        read, write = designs["this design"][label]
        rcu, wcu = read * times * people, write * times * people
        dollars = _dollars(rcu, wcu) * 30
        rows.append((label, rcu, wcu, dollars))
        total += dollars
    for label, times, read, write in ALWAYS_ON:
        dollars = _dollars(times * read, times * write) * 30
        rows.append((label, times * read, times * write, dollars))
        total += dollars
    for label, rcu, wcu, dollars in sorted(rows, key=lambda row: -row[3]):
        print(f"  {label:<48} {rcu:14,.0f} {wcu:14,.0f} {dollars:10,.2f} {dollars / total:6.0%}")
    print(f"\n{'design':<20} {'RCU/day':>14} {'WCU/day':>14} {'$/month':>10}")
    for name, costs in designs.items():
        rcu = sum(costs[label][0] * times * people for label, times in DAILY_MIX.items())
        wcu = sum(costs[label][1] * times * people for label, times in DAILY_MIX.items())
        if name == "this design":  # the others are charged no workers at all
            rcu += sum(times * read for _, times, read, _ in ALWAYS_ON)
            wcu += sum(times * write for _, times, _, write in ALWAYS_ON)
        print(f"  {name:<18} {rcu:14,.0f} {wcu:14,.0f} {_dollars(rcu, wcu) * 30:10,.2f}")
    mails = DAILY_MIX["notification mail sent (sender, per mail)"] * people
    print(
        f"  + e-mail through Amazon SES: {mails:,.0f} mails a day, ${mails * 30 * SES_PRICE_PER_MAIL:,.2f} a month "
        "(billed by SES, not DynamoDB)"
    )
    print(
        "  (seed 000's like: 20 WCU on a quiet comment, and every liker of a comment writes the same two\n"
        "   items, which AWS serialises: a popular comment's likes fail; its liker list grows, ~62 WCU a\n"
        "   like at 1,000 unread likers. Seed 002 rewrites the ~98 KB feed item for every event.)"
    )


def print_live_share(*, people: int, measured: dict[str, tuple[float, float]]) -> None:
    """The site bill and the live channel's share of it: every poll a full answer (before) and
    conditional polls over the change log (this design)."""
    this = _design(measured, {})
    others = {label: cost for label, cost in this.items() if label not in LIVE_AFTER}
    base = sum(
        _dollars(read * DAILY_MIX[label] * people, write * DAILY_MIX[label] * people)
        for label, (read, write) in others.items()
    )
    base += sum(
        _dollars(times * read, times * write) for label, times, read, write in ALWAYS_ON if label not in LIVE_ALWAYS_ON
    )
    full = measured.get("live poll, 5 comments on screen", FLOORS["live poll, 5 comments on screen"])
    full = (max(full[0], FLOORS["live poll, 5 comments on screen"][0]), full[1])  # without shared reads
    before = _dollars(full[0] * LIVE_BEFORE["live poll, 5 comments on screen"] * people, 0)
    after_polls = sum(
        _dollars(this[label][0] * DAILY_MIX[label] * people, this[label][1] * DAILY_MIX[label] * people)
        for label in LIVE_AFTER
    )
    after_log = sum(
        _dollars(times * read, times * write) for label, times, read, write in ALWAYS_ON if label in LIVE_ALWAYS_ON
    )
    signals = sum(DAILY_MIX[label] * per for label, per in LIVE_SIGNALS_PER_PERSON.items()) * people
    after_signals = _dollars(0, signals)
    after = after_polls + after_log + after_signals
    # The signal puts are in their writers' measured lines (in `base`); before, nobody put them.
    bill_before, bill_after = base - after_signals + before, base + after_polls + after_log
    print(f"\nThe live channel ({people:,} people, 600 polls each a day), $ a day:")
    print(
        f"  before: every poll a full answer ({full[0]:.1f} RCU): {before:,.2f} of a bill of {bill_before:,.2f}: "
        f"{before / bill_before:.0%}"
    )
    print(
        f"  this design: polls {after_polls:,.2f} + the log's refreshes {after_log:,.2f} + {signals:,.0f} signal puts "
        f"{after_signals:,.2f} = {after:,.2f} of a bill of {bill_after:,.2f}: {after / bill_after:.0%} "
        f"(target <= 10%); {after / before:.0%} of before"
    )
    # The same with LIVE_FULL_EVERY=60: twice the net's full answers (the others were 304s).
    net = "live poll, full answer (5 comments, hearts)"
    more = _dollars(this[net][0] * DAILY_MIX[net] * people, this[net][1] * DAILY_MIX[net] * people)
    print(
        f"  with LIVE_FULL_EVERY=60 (twice the full answers): {after + more:,.2f} of {bill_after + more:,.2f}: "
        f"{(after + more) / (bill_after + more):.0%}"
    )
