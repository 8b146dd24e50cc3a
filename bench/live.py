"""Live updates on an open page: how late the badge and a like count follow a change, and
what an idle open tab costs.

    .venv/bin/python bench/live.py [--trials 30]

1. Lag, in real Chromium (Debian's, as in the browser tests) on the site served by a live
   server: a like is committed at a random moment, and the page records (MutationObserver,
   wall clock) when its badge and the comment's count show it. p50 / p95 / max.
2. One poll, GET /api/live/, through HTTP: a full answer (no If-None-Match) with 0, 5 and 20
   comments on screen beside its floor (the raw DynamoDB calls it needs with the bare boto3
   client: the unread-count Query, one counter Query per comment, eventually consistent);
   then, with the ETag of the answer before, 5 comments and hearts: unchanged (a 304 that
   reads nothing of the viewer's; the change log's own Queries apart) and changed (a like
   folded: the changed count and the badge read strongly), with the units DynamoDB reports.
3. Cost of an open tab per hour: requests and read units (visible; visible but idle for
   10 minutes; hidden).
"""

from __future__ import annotations

import argparse
import os
import random
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

os.environ.setdefault("API_THROTTLE_LIVE", "100000/min")  # this script polls far faster than a tab
# One viewer's costs: no count shared from the poll a moment before (a page polls every 2 s).
os.environ.setdefault("SHARED_READ_SECONDS", "0")

from _setup import PRICE_PER_MILLION_READS, bench_environment, capacity_meter, percentiles

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking"]
ARGS += ["--disable-component-update", "--disable-sync", "--disable-dev-shm-usage"]
POLLS_PER_HOUR = {"visible": 3600 / 2, "idle (no input for 10 min)": 3600 / 30, "hidden": 0}
RECORDER = """() => {
  window.changes = {badge: [], count: []};
  const badge = document.querySelector('[data-unread-badge]');
  const count = document.querySelector('[data-like-count]');
  new MutationObserver(() => window.changes.badge.push([Date.now(), badge.firstChild.nodeValue]))
    .observe(badge, {childList: true, subtree: true, characterData: true});
  new MutationObserver(() => window.changes.count.push([Date.now(), count.textContent]))
    .observe(count, {childList: true, subtree: true, characterData: true});
}"""


def serve():
    from django.contrib.staticfiles.handlers import StaticFilesHandler
    from django.db import connections
    from django.test.testcases import LiveServerThread

    connection = connections["default"]
    connection.inc_thread_sharing()  # the in-memory SQLite, shared with the server thread
    server = LiveServerThread("localhost", StaticFilesHandler, connections_override={"default": connection}, port=0)
    server.daemon = True
    server.start()
    server.is_ready.wait()
    if server.error:
        raise server.error
    return server, f"http://localhost:{server.port}"


def first_change_after(changes: list, since_ms: float, value: str) -> float | None:
    for at, text in changes:
        if at >= since_ms and text.strip() == value:
            return at - since_ms
    return None


def bench_lag(base: str, trials: int) -> None:
    from django.test import Client
    from playwright.sync_api import sync_playwright

    from actions.comments import comment_create
    from actions.likes import like_add
    from social.models import User

    alice = User.objects.create(username="lag-alice", display_name="Alice")
    likers = [User.objects.create(username=f"lag-{n}", display_name=f"Liker {n}") for n in range(trials)]
    comment = comment_create(author_id=str(alice.pk), body="Watch the badge").comment_id
    client = Client()
    client.force_login(alice)
    cookie = client.cookies["sessionid"]

    print(f"== lag from a committed like to the open page ({trials} likes at random moments)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        context = browser.new_context(base_url=base)
        context.add_cookies([{"name": cookie.key, "value": cookie.value, "url": base}])
        page = context.new_page()
        page.goto("/")
        page.evaluate(RECORDER)
        badge_lags, count_lags = [], []
        for n, liker in enumerate(likers, start=1):
            page.wait_for_timeout(random.uniform(500, 2500))  # a random phase against the 2 s poll
            like_add(comment_id=comment, user_id=str(liker.pk))
            committed_ms = time.time() * 1000
            page.wait_for_function(
                "n => window.changes.badge.some(c => c[1].trim() === String(n)) && "
                "window.changes.count.some(c => c[1].trim() === String(n))",
                arg=n,
                timeout=30_000,
            )
            changes = page.evaluate("() => window.changes")
            badge_lags.append(first_change_after(changes["badge"], committed_ms, str(n)) / 1000)
            count_lags.append(first_change_after(changes["count"], committed_ms, str(n)) / 1000)
        browser.close()
    for label, lags in (("badge", badge_lags), ("like count", count_lags)):
        ordered = sorted(lags)
        p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
        print(
            f"   {label:<11} p50 {percentiles(lags)['p50'] / 1000:5.2f} s  p95 {p95:5.2f} s  "
            f"max {max(lags):5.2f} s  (aim: p95 <= 2 s)"
        )


def raw_floor(user_id: str, comment_ids: list[str], pool: ThreadPoolExecutor):
    """The DynamoDB calls one poll needs, made with the bare boto3 client as the endpoint makes
    them: the unread-count Query on the `by_count` LSI, then one Query per comment's counter
    items (concurrently, 8 at a time, as `counter_values` does), all eventually consistent."""
    from notifications.models import UnreadCount
    from project.dynamo.clients import client
    from social.counters import LIKES, counter_key
    from social.models import CounterShard

    raw = client()
    keys = [counter_key(kind=LIKES, object_id=comment_id) for comment_id in comment_ids]

    def counter(key: str) -> None:
        raw.query(
            TableName=CounterShard.Meta.table_name,
            KeyConditionExpression="counter_key = :k",
            ExpressionAttributeValues={":k": {"S": key}},
        )

    def floor() -> None:
        raw.query(
            TableName=UnreadCount.Meta.table_name,
            IndexName="by_count",
            KeyConditionExpression="user_id = :u AND #count > :zero",
            ExpressionAttributeNames={"#count": "count"},
            ExpressionAttributeValues={":u": {"S": user_id}, ":zero": {"N": "0"}},
        )
        if len(keys) == 1:
            counter(keys[0])
        elif keys:
            list(pool.map(counter, keys))

    return floor


def http_poll(base: str, token: str, ids: list[str], *, etag: str | None = None, hearts: bool = False):
    """One GET /api/live/ over HTTP; returns (status, ETag)."""
    query = ("?comments=" + ",".join(ids) + ("&hearts=1" if hearts else "")) if ids else ""
    headers = {"Authorization": f"Token {token}", **({"If-None-Match": etag} if etag else {})}
    request = urllib.request.Request(f"{base}/api/live/{query}", headers=headers)
    try:
        with urllib.request.urlopen(request) as answer:
            answer.read()
            return answer.status, answer.headers["ETag"]
    except urllib.error.HTTPError as answer:  # 304 comes as an "error" to urllib
        if answer.code != 304:
            raise
        return 304, answer.headers["ETag"]


def viewer_reads(meter) -> float:
    """Read units of a metered stretch, less the change log's own Queries (shared by the process)."""
    shared = sum(units for call, (_, units) in meter.by_call.items() if "live_changes" in call)
    return meter.read - shared


def bench_poll(base: str) -> dict[str, float]:
    from rest_framework.authtoken.models import Token

    from actions.comments import comment_create
    from actions.likes import like_add
    from notifications.like_fold import like_events_fold_until_idle
    from social.live import change_log
    from social.models import User

    author = User.objects.create(username="poll-author", display_name="Author")
    fan = User.objects.create(username="poll-fan", display_name="Fan")
    others = [User.objects.create(username=f"poll-liker-{n}", display_name=f"L{n}") for n in range(60)]
    ids = [comment_create(author_id=str(author.pk), body=f"comment {n}").comment_id for n in range(20)]
    with ThreadPoolExecutor(8) as pool:
        list(pool.map(lambda cid: like_add(comment_id=cid, user_id=str(fan.pk)), ids))
    like_events_fold_until_idle()
    token = Token.objects.create(user=author).key
    time.sleep(3.5)  # past LIVE_SIGNAL_LAG: the set-up's signals are history

    print("== one poll: GET /api/live/ over HTTP (token auth) vs its raw DynamoDB calls (same run)")
    reads = {}
    pool = ThreadPoolExecutor(8)
    for shown in (0, 5, 20):
        floor = raw_floor(str(author.pk), ids[:shown], pool)
        for _ in range(5):
            http_poll(base, token, ids[:shown]), floor()
        samples, floor_samples, polled = [], [], 0.0
        for _ in range(60):
            with capacity_meter() as meter:
                start = time.perf_counter()
                http_poll(base, token, ids[:shown])
                samples.append(time.perf_counter() - start)
            polled += meter.read
            start = time.perf_counter()
            floor()
            floor_samples.append(time.perf_counter() - start)
        reads[shown] = polled / 60
        ratio = percentiles(samples)["p50"] / percentiles(floor_samples)["p50"]
        print(
            f"   full answer (no If-None-Match: a poll without the change log), {shown:>2} comments: "
            f"p50 {percentiles(samples)['p50']:6.2f} ms  p99 {percentiles(samples)['p99']:6.2f} ms  "
            f"floor p50 {percentiles(floor_samples)['p50']:6.2f} ms ({ratio:.2f}x)  {reads[shown]:.1f} RCU/poll"
        )
    pool.shutdown()

    shown = ids[:5]
    _, etag = http_poll(base, token, shown, hearts=True)
    time.sleep(3.5)
    statuses, samples = [], []
    log_reads = change_log.reads
    with capacity_meter() as meter:
        started = time.perf_counter()
        for _ in range(200):
            start = time.perf_counter()
            status, etag = http_poll(base, token, shown, etag=etag, hearts=True)
            samples.append(time.perf_counter() - start)
            statuses.append(status)
        seconds = time.perf_counter() - started
    reads["unchanged"] = viewer_reads(meter) / len(samples)
    refreshes = change_log.reads - log_reads
    print(
        f"   unchanged (If-None-Match, 5 comments, hearts): {statuses.count(304)} of {len(statuses)} answered 304, "
        f"p50 {percentiles(samples)['p50']:6.2f} ms  p99 {percentiles(samples)['p99']:6.2f} ms  "
        f"{reads['unchanged']:.2f} RCU/poll of the viewer's (floor 0)"
    )
    print(
        f"   the change log meanwhile: {refreshes} Queries in {seconds:.1f} s ({refreshes / seconds:.1f}/s, "
        f"at most 1 per part per LIVE_LOG_REFRESH per process whatever the polls), "
        f"{meter.read - reads['unchanged'] * len(samples):.1f} RCU"
    )

    samples, statuses, units = [], [], []
    for n in range(30):
        like_add(comment_id=shown[n % 5], user_id=str(others[n].pk))
        like_events_fold_until_idle()  # the fold signals the count and the badge
        time.sleep(0.6)  # the log's next refresh is due
        with capacity_meter() as meter:
            start = time.perf_counter()
            status, etag = http_poll(base, token, shown, etag=etag, hearts=True)
            samples.append(time.perf_counter() - start)
        statuses.append(status)
        units.append(viewer_reads(meter))
        time.sleep(3.5)  # an unchanged poll in between, which must be a 304 again
        status, etag = http_poll(base, token, shown, etag=etag, hearts=True)
        statuses.append(status)
    reads["changed"] = sum(units) / len(units)
    print(
        f"   one of the 5 counts and the badge changed (a like folded): {statuses[::2].count(200)} of 30 answered 200, "
        f"p50 {percentiles(samples)['p50']:6.2f} ms  p99 {percentiles(samples)['p99']:6.2f} ms  "
        f"{reads['changed']:.2f} RCU/poll (floor 3: the changed count, its heart and the badge, strongly; the 4 other counts shared, no signal since); "
        f"the poll after it: {statuses[1::2].count(304)} of 30 answered 304"
    )
    return reads


def report_tab_cost(reads: dict) -> None:
    print("== an open tab per hour (2 s polls while visible, 30 s after 10 min without input)")
    for label, per_poll in (
        ("0 on screen, full answers (no ETag)", reads[0]),
        ("5 on screen, full answers (no ETag)", reads[5]),
        ("5 on screen, nothing changes (304s)", reads["unchanged"]),
    ):
        for state, polls in POLLS_PER_HOUR.items():
            units = polls * per_poll
            dollars = units * PRICE_PER_MILLION_READS / 1e6
            print(
                f"   {label:<37} {state:<27} {polls:6.0f} requests/h  {units:7.0f} RCU/h  "
                f"${dollars * 24 * 30:.3f} a month if always open"
            )
    print("   + one full answer every two minutes at most (LIVE_FULL_EVERY) and one per change shown")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=30, help="likes to time in the browser (default 30)")
    options = parser.parse_args()
    with bench_environment():
        server, base = serve()
        try:
            reads = bench_poll(base)
            report_tab_cost(reads)
            bench_lag(base, options.trials)
        finally:
            server.terminate()


if __name__ == "__main__":
    main()
