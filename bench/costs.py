"""What each user-facing operation costs in DynamoDB capacity units, as DynamoDB Local reports them,
beside its floor; and (--site) what a site with N daily active people costs a month.

    .venv/bin/python bench/costs.py [--repeat 20] [--site] [--people 10000]

Every operation runs `--repeat` times against realistic state (the recipient's feed full
with 100 entries, comments with a few likes and replies), through the same services,
pages and endpoints users reach; each line gives the mean read and write units of one
operation (ReturnConsumedCapacity), its median latency, what a million of them cost at
on-demand prices, and its floor: the least units the writes it must make can cost
(FLOORS, each explained). A like is shown synchronously (what the request pays) and
all-in (with its fold, which runs after the answer). The cost table in docs/explanation/costs.md is this
output. `--site` multiplies the measured units by a stated daily mix (site_model.py). Reads
that a web process shares between requests (SHARED_READ_SECONDS) are not shared here: each
operation pays its own, as on a quiet site.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import uuid

# Each operation's own reads: a web process shares eventually consistent reads between its
# requests for a moment (project/dynamo/shared_reads.py), which would make a repeated page look free.
os.environ.setdefault("SHARED_READ_SECONDS", "0")

from _setup import bench_environment, capacity_meter, units
from site_model import FLOORS, print_live_share, print_site_model

# A comment of about 300 characters (a short paragraph): what a page of comments reads.
TEXT = (
    "Tried the new release on our staging cluster this morning. Deploys are noticeably faster and "
    "the dashboard finally shows per-region latency, which is what we asked for. One thing I could "
    "not find: how to export the weekly report as CSV. Is that still planned, or should we script it?"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--site", action="store_true", help="also print the cost model of a whole site")
    parser.add_argument("--people", type=int, default=10_000, help="daily active people (--site)")
    parser.add_argument("--detail", action="store_true", help="also print each operation's calls and their units")
    args = parser.parse_args()
    repeat = args.repeat

    with bench_environment():
        from django.conf import settings
        from django.contrib.auth import get_user_model
        from django.test import Client, override_settings

        from actions.comments import comment_create
        from actions.likes import like_add, like_remove
        from actions.reactions import reaction_add, reaction_remove
        from delivery import dispatch as delivery_dispatch
        from delivery import preparation as delivery_preparation
        from delivery import services as delivery_services
        from notifications.feed import merge as feed_merge
        from notifications.feed import services as feed_services
        from notifications.feed.events import FeedEvent
        from notifications.like_fold import (
            like_events_fold_pending,
            like_events_fold_until_idle,
            like_events_pending_comments,
        )
        from notifications.mail.selectors import mail_queue_due
        from notifications.mail.services import SENT, mail_process
        from notifications.preferences.services import preferences_update, thread_watch
        from project.clock import clock
        from social.aggregation import counter_aggregate, counters_aggregate_pending, counters_pending
        from social.counters import flag_reuse_seconds
        from social.live import change_log
        from social.services import comment_delete, comment_edit

        User = get_user_model()
        author = User.objects.create_user(username="author", password="!", display_name="Author")
        people = [User.objects.create_user(username=f"p{n}", password="!") for n in range(repeat + 5)]
        staff = User.objects.create_user(username="staff", password="!", is_staff=True)

        def fill_feed(user_id: str) -> None:
            for n in range(feed_merge.feed_max_entries()):
                parent = comment_create(author_id=user_id, body=f"Comment {n}: {TEXT}")
                replier = str(people[n % len(people)].pk)
                reply = comment_create(author_id=replier, body="A reply " * 10, parent_id=parent.comment_id)
                del reply

        author_id = str(author.pk)
        fill_feed(author_id)  # 100 reply entries, unread
        comment = comment_create(author_id=author_id, body="The comment people like and read")
        for person in people[:5]:
            like_add(comment_id=comment.comment_id, user_id=str(person.pk))
        like_events_fold_until_idle()
        browser = Client()
        browser.force_login(author)

        results: list[tuple[str, float, float, float]] = []

        def mail_sent(outcome: str) -> None:
            assert outcome == SENT, outcome

        details: dict[str, dict[str, list[float]]] = {}

        def run(label: str, operation, *, per: int = 1, prepare=None) -> None:
            """Meter `operation(n)`, `repeat` times; `prepare(n)` runs before each, unmetered."""
            latencies = []
            read = write = 0.0
            for n in range(repeat):
                if prepare:
                    prepare(n)
                with capacity_meter() as meter:
                    start = time.perf_counter()
                    operation(n)
                    latencies.append(time.perf_counter() - start)
                read, write = read + meter.read, write + meter.write
                for call, (calls, spent) in meter.by_call.items():
                    entry = details.setdefault(label, {}).setdefault(call, [0, 0.0])
                    entry[0] += calls / (repeat * per)
                    entry[1] += spent / (repeat * per)
            results.append(
                (label, read / (repeat * per), write / (repeat * per), statistics.median(latencies) * 1000 / per)
            )

        run("post a comment", lambda n: comment_create(author_id=author_id, body=f"Post {n}: {TEXT}"))
        # Each reply to a comment of its own: a reply watches its thread, so replies to one comment
        # would tell every earlier replier too (that is "reply notifying 5" below).
        parents: list = []
        run(
            "reply (the parent's author has a full feed)",
            lambda n: comment_create(author_id=str(people[n].pk), body="Thanks!", parent_id=parents[n].comment_id),
            prepare=lambda n: parents.append(comment_create(author_id=author_id, body=f"Replied to {n}: {TEXT}")),
        )
        for person in people[:repeat]:  # the comment people view has replies, as a discussed one does
            comment_create(author_id=str(person.pk), body="Thanks!", parent_id=comment.comment_id)
        # Comments with a few likes (3, folded), each then liked by one more person.
        others = [comment_create(author_id=author_id, body=f"Likeable {n}: {TEXT}") for n in range(repeat)]
        for other in others:
            for person in people[repeat : repeat + 3]:
                like_add(comment_id=other.comment_id, user_id=str(person.pk))
        like_events_fold_until_idle()
        doomed = [comment_create(author_id=author_id, body=f"Doomed {n}: {TEXT}") for n in range(repeat)]
        run(
            "edit a comment (200 characters)",
            lambda n: comment_edit(comment_id=others[n].comment_id, author_id=author_id, body="Edited " * 28),
        )
        doomed = [comment_create(author_id=author_id, body=f"Deletable {n}: {TEXT}") for n in range(repeat)]
        for gone in doomed:
            for person in people[repeat : repeat + 3]:
                like_add(comment_id=gone.comment_id, user_id=str(person.pk))
        like_events_fold_until_idle()
        run(
            "delete a comment (no replies)",
            lambda n: comment_delete(comment_id=doomed[n].comment_id, author_id=author_id),
        )

        def note_calls(label: str, meter, *, per: int = repeat) -> None:
            for call, (calls, spent) in meter.by_call.items():
                entry = details.setdefault(label, {}).setdefault(call, [0, 0.0])
                entry[0] += calls / per
                entry[1] += spent / per

        def with_fold(label: str, operation) -> None:
            """The operation without its fold (the request's part), then all-in (with its fold)."""
            latencies, synchronous, folds = [], [], []
            for n in range(repeat):
                with override_settings(LIKE_FOLD_AFTER_RESPONSE=False), capacity_meter() as meter:
                    start = time.perf_counter()
                    operation(n)
                    latencies.append(time.perf_counter() - start)
                synchronous.append(meter.per(1))
                note_calls(f"{label}, synchronous", meter)
                with capacity_meter() as meter:
                    # As the polling folder pays it: the poll that finds the event (an eventually
                    # consistent Scan) and folds it, then the next, empty poll.
                    like_events_fold_pending()
                    like_events_pending_comments(limit=1)
                folds.append(meter.per(1))
                note_calls(f"{label}, its fold", meter)
            read = statistics.fmean(r for r, _ in synchronous)
            write = statistics.fmean(w for _, w in synchronous)
            results.append((f"{label}, synchronous", read, write, statistics.median(latencies) * 1000))
            fold_read = statistics.fmean(r for r, _ in folds)
            fold_write = statistics.fmean(w for _, w in folds)
            results.append((f"{label}, all-in (+ its fold)", read + fold_read, write + fold_write, float("nan")))

        def aggregation(label: str) -> None:
            """Meter the aggregation of each counter changed since the last call (the claim, the
            shards' sum, the total and its ranking entry; not the poll that finds them, which is
            in the site model's idle polls): what one changed counter costs the aggregator."""
            pending = list(counters_pending(due_only=False))
            read = write = 0.0
            for seen in pending:
                with capacity_meter() as meter:
                    outcome = counter_aggregate(key=seen.key, seen_due_at=seen.due_at, sleep=lambda seconds: None)
                assert outcome is not None, seen
                read, write = read + meter.read, write + meter.write
                note_calls(label, meter, per=len(pending))
            results.append((label, read / len(pending), write / len(pending), float("nan")))

        counters_aggregate_pending(due_only=False, sleep=lambda seconds: None)  # the set-up's counters
        with_fold("like", lambda n: like_add(comment_id=others[n].comment_id, user_id=str(people[n].pk)))
        aggregation("aggregation of a liked comment's count")
        with_fold("unlike", lambda n: like_remove(comment_id=others[n].comment_id, user_id=str(people[n].pk)))
        counters_aggregate_pending(due_only=False, sleep=lambda seconds: None)
        # Reactions on comments that already have one (a comment's first reaction also marks it:
        # its item's size in KB, twice, once in its life), each answered with the exact reactions.
        for other in others:
            reaction_add(comment_id=other.comment_id, user_id=str(people[repeat].pk), name="eyes")
        like_events_fold_until_idle()  # those reactions' events: their author is told
        with_fold(
            "reaction", lambda n: reaction_add(comment_id=others[n].comment_id, user_id=str(people[n].pk), name="heart")
        )
        aggregation("aggregation of a reacted-to comment's count")
        with_fold(
            "reaction taken back",
            lambda n: reaction_remove(comment_id=others[n].comment_id, user_id=str(people[n].pk), name="heart"),
        )
        counters_aggregate_pending(due_only=False, sleep=lambda seconds: None)

        def view(n):
            visitor = Client(REMOTE_ADDR=f"10.0.{n // 250}.{n % 250 + 1}")  # a new viewer: the view is counted
            assert visitor.get(f"/c/{comment.comment_id}/").status_code == 200

        run("comment page view (counted, anonymous)", view)
        run("timeline page", lambda n: browser.get("/"))
        run("inbox (API, a full feed)", lambda n: browser.get("/api/notifications/"))
        run("badge (API unread count)", lambda n: browser.get("/api/notifications/unread-count/"))
        on_screen = ",".join(other.comment_id for other in others[:5])
        run("live poll, 5 comments on screen", lambda n: browser.get(f"/api/live/?comments={on_screen}"))
        # The same poll as pages send it (hearts, If-None-Match with the answer before's ETag):
        # nothing changed (304), then one of the 5 counts changed (a like folded just before).
        live_url = f"/api/live/?comments={on_screen}&hearts=1"
        time.sleep(settings.LIVE_SIGNAL_LAG + 0.5)  # the set-up's signals are history
        etag = {"now": browser.get(live_url)["ETag"]}

        def live_poll(n, expected):
            answer = browser.get(live_url, HTTP_IF_NONE_MATCH=etag["now"])
            assert answer.status_code == expected, (answer.status_code, expected)
            etag["now"] = answer["ETag"]

        time.sleep(settings.LIVE_SIGNAL_LAG + 0.5)  # the set-up's signals are history

        def log_refreshed(n):  # the process's change log is charged on its own line (site_model.py)
            time.sleep(settings.LIVE_LOG_REFRESH + 0.05)
            change_log.refresh()

        run("live poll, nothing changed (304)", lambda n: live_poll(n, 304), prepare=log_refreshed)

        def liked_elsewhere(n):
            # Changes on one screen more than LIVE_SIGNAL_LAG apart (the site model's: one a
            # minute); closer ones make a poll read the one before again (1.8 counts at 0.7 s).
            time.sleep(settings.LIVE_SIGNAL_LAG)
            like_add(comment_id=others[n % 5].comment_id, user_id=str(people[n].pk))
            like_events_fold_until_idle()  # the fold signals the count (and the badge)
            log_refreshed(n)

        run("live poll, a count on screen changed (200)", lambda n: live_poll(n, 200), prepare=liked_elsewhere)
        # The net: a full answer at least every LIVE_FULL_EVERY (no If-None-Match here), read afresh
        # (past SHARED_READ_SECONDS, so no count another request read a moment ago is reused).
        run(
            "live poll, full answer (5 comments, hearts)",
            lambda n: browser.get(live_url),
            prepare=lambda n: time.sleep(settings.SHARED_READ_SECONDS + 0.1),
        )

        # Comments viewed before (their view total aggregated), each viewed once more: what the
        # aggregator pays for that view.
        viewed = [comment_create(author_id=author_id, body=f"Viewed {n}: {TEXT}") for n in range(repeat)]
        for visit in (1, 2):
            counters_aggregate_pending(due_only=False, sleep=lambda seconds: None)
            time.sleep(flag_reuse_seconds())  # this process raises the next view's flag itself
            for n, each in enumerate(viewed):  # a new visitor each: a counted view
                visitor = Client(REMOTE_ADDR=f"10.{visit}.{n // 250}.{n % 250 + 1}")
                assert visitor.get(f"/c/{each.comment_id}/").status_code == 200
        aggregation("aggregation of a viewed comment's count")

        run(
            "mark all read (after one new entry)",
            lambda n: browser.post("/api/notifications/read-all/"),
            prepare=lambda n: feed_services.feed_append(
                user_id=author_id, event=FeedEvent(f"m{n}", "message", None, None, title="Hi")
            ),
        )
        run(
            "feed event into a full feed",
            lambda n: feed_services.feed_append(
                user_id=author_id,
                event=FeedEvent(
                    f"e{n}", "reply", str(people[n].pk), f"reply#{uuid.uuid4()}", object_id=str(uuid.uuid4())
                ),
            ),
        )

        # Choices over what reaches people: preferences and a thread's mute, through the API.
        run("preferences (API GET, never saved)", lambda n: browser.get("/api/me/preferences/"))
        run(
            "preferences saved (API PATCH, one flag)",
            lambda n: browser.patch(
                "/api/me/preferences/", {"kinds": {"reply": {"email": n % 2 == 0}}}, content_type="application/json"
            ),
        )
        run("mute a thread (API PUT)", lambda n: browser.put(f"/api/comments/{others[n].comment_id}/mute/"))

        # A reply's fan-out: a new thread each time, watched by 3 people, the reply mentioning a
        # fourth; the parent's author, the mentioned person and the 3 watchers each get one entry
        # (feeds of a few entries), the replier starts watching.
        threads = []

        def watched_thread(n: int) -> None:
            root = comment_create(author_id=author_id, body=f"Thread {n}: {TEXT}")
            for watcher in people[repeat : repeat + 3]:
                thread_watch(user_id=str(watcher.pk), thread_id=root.comment_id)
            threads.append(root)

        run(
            "reply notifying 5 (author, 1 mention, 3 watchers)",
            lambda n: comment_create(
                author_id=str(people[n].pk),
                body=f"@{people[repeat + 4].username} have a look",
                parent_id=threads[n].comment_id,
            ),
            prepare=watched_thread,
        )
        # A reply mail: the parent's author opted in to e-mail for replies (a verified address).
        # The reply's fan-out also queues the mail (in the feed write's transaction); the sender's
        # work for one due mail: its claim, the checks at send time (the entry still unread, the
        # preferences, the thread's mute, the limits), the ledger line, the send, the marks.
        mailer = User.objects.create_user(
            username="mailer",
            password="!",
            email="mailer@example.com",
            email_verified=True,
            locale="ja",
            time_zone="Asia/Tokyo",
        )
        preferences_update(user_id=str(mailer.pk), patch={"kinds": {"reply": {"email": True}}})
        mailed = [comment_create(author_id=str(mailer.pk), body=f"Mail me {n}: {TEXT}") for n in range(repeat)]
        run(
            "reply whose author gets e-mail (queued)",
            lambda n: comment_create(author_id=str(people[n].pk), body="Replying", parent_id=mailed[n].comment_id),
        )
        queued = [
            item for item in mail_queue_due(limit=1000, now_ms=clock.now_ms() + 10**9) if item.user_id == str(mailer.pk)
        ]
        assert len(queued) == repeat, len(queued)
        # One recipient gets all `repeat` mails: its limit is raised to let them through, still
        # counted (the limit's write is part of what a mail costs).
        recipient_limit = f"{max(repeat, 10)}/hour,{max(repeat, 50)}/day"
        with override_settings(
            EMAIL_BACKEND="django.core.mail.backends.locmem.EmailBackend", MAIL_LIMIT_RECIPIENT=recipient_limit
        ):
            run("notification mail sent (sender, per mail)", lambda n: mail_sent(mail_process(item=queued[n])))
        print_send_reads()
        print_digest_pass()

        # A reply push: the parent's author has push on for replies and one browser subscribed at
        # a local push-service stand-in (it checks the signature and decrypts, as a vendor's does).
        # The reply's fan-out queues the push (in the feed write's transaction: in the reply's
        # line); the sender's work for one due push, as `send_push` does it: its claim, the checks
        # at send time, the browser list, the ledger line, the send, the marks.
        from notifications.mail.queue import PUSH
        from notifications.push.keys import vapid_key_generate, vapid_public_key
        from notifications.push.sender import push_process
        from notifications.push.services import subscription_add
        from tests.notifications.push_service import push_service_start

        push_settings = {
            "VAPID_PRIVATE_KEY": vapid_key_generate(),
            "LOCAL_PLAIN_HTTP": True,
            "PUSH_SERVICE_HOSTS": ["127.0.0.1"],
        }
        with override_settings(**push_settings):
            service, server = push_service_start(vapid_public_key=vapid_public_key())
            pushed = User.objects.create_user(username="pushed", password="!")
            preferences_update(user_id=str(pushed.pk), patch={"kinds": {"reply": {"push": True}}})
            subscription_add(user_id=str(pushed.pk), data=service.subscribe().to_json())
            for n in range(repeat):
                parent = comment_create(author_id=str(pushed.pk), body=f"Push me {n}: {TEXT}")
                comment_create(author_id=str(people[n].pk), body="Replying", parent_id=parent.comment_id)
            due_pushes = [item for item in mail_queue_due(limit=1000, channel=PUSH) if item.user_id == str(pushed.pk)]
            assert len(due_pushes) == repeat, len(due_pushes)
            run("push sent (sender, per push)", lambda n: mail_sent(push_process(item=due_pushes[n])))
            server.shutdown()
            assert len(service.delivered()) == repeat, service.refused[:3]

        # Delivered targets: a delivery to `repeat` users whose feeds are full.
        audience = people[:repeat]
        for person in audience:
            for n in range(feed_merge.feed_max_entries()):
                feed_services.feed_append(
                    user_id=str(person.pk),
                    event=FeedEvent(f"fill{n}", "message", None, None, delivery_id=uuid.uuid4().hex),
                )
        delivery = delivery_services.delivery_create(
            title="Hello",
            body="A broadcast",
            url=None,
            audience=delivery_services.Audience(kind="usernames", usernames=[p.username for p in audience]),
            created_by=staff,
        )
        delivery_preparation.delivery_prepare(delivery_id=delivery.delivery_id)
        with capacity_meter() as meter:
            start = time.perf_counter()
            report = delivery_dispatch.delivery_dispatch(
                delivery_id=delivery.delivery_id,
                owner="costs",
                batch_size=delivery_services.BATCH_SIZE_MAX,
                lease_seconds=60,
            )
            seconds = time.perf_counter() - start
        assert report.delivered == repeat, report
        read, write = meter.per(repeat)
        results.append(("delivered target (a full feed; dispatch only)", read, write, seconds * 1000 / repeat))

        print(f"{'operation':<48} {'p50 ms':>7}  units of one operation, on-demand price   floor (see FLOORS)")
        for label, read, write, ms in results:
            floor = FLOORS.get(label)
            shown = f"{floor[0]:g} RCU {floor[1]:g} WCU" if floor else ""
            print(f"{label:<48} {ms:7.1f}  {units(read, write)}   {shown}")
        if args.detail:
            print("\nWhere the units go: each operation's calls (per operation) and their units")
            for label, calls in details.items():
                print(f"  {label}")
                for call, (count, spent) in sorted(calls.items(), key=lambda item: -item[1][1]):
                    print(f"    {count:5.1f} x {call:<60} {spent:5.2f} units")
        if args.site:
            measured = {label: (read, write) for label, read, write, _ in results}
            print_site_model(people=args.people, measured=measured)
            print_live_share(people=args.people, measured=measured)


def print_send_reads() -> None:
    """The SQL a mail's send makes for its recipient: one query of the user row, which holds the
    address, language, time zone, quiet hours and digest hour together; no DynamoDB call."""
    from _setup import capacity_meter
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from notifications.mail.checks import recipient_get

    user_id = str(_mailer_id())
    with CaptureQueriesContext(connection) as queries, capacity_meter() as meter:
        recipient = recipient_get(user_id=user_id)
    print(
        f"\nA send's recipient (address, locale {recipient.locale!r}, time zone {recipient.time_zone!r}): "
        f"{len(queries.captured_queries)} SQL query, {meter.calls} DynamoDB calls"
    )


def _mailer_id() -> int:
    from django.contrib.auth import get_user_model

    return get_user_model().objects.get(username="mailer").pk


DIGEST_ZONES = ("Asia/Tokyo", "Europe/Warsaw", "America/New_York", "UTC")


def print_digest_pass(readers_steps: tuple[int, ...] = (40, 80)) -> None:
    """What the quarter-hourly digest pass reads: DynamoDB units and SQL queries per pass and per
    reader of a digest, at a quarter hour when nobody is due and at one when a quarter of the
    readers (Tokyo's) are, each pass after the previous quarter hour's finished (the steady
    state), and the first pass after a gap (which reads every reader). The readers' inboxes are
    empty, so nothing is mailed: these are the pass's own reads."""
    from datetime import timedelta

    from _setup import capacity_meter
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from notifications.mail.digest import digests_send
    from notifications.preferences.services import preferences_update
    from project.clock import ManualClock, clock_override

    User = get_user_model()
    made = 0
    day = 0
    print("\nThe digest pass (every quarter hour), the readers' digest hour 08:00 in their zones:")
    print(f"  {'digest readers':>14} {'pass':<34} {'RCU':>6} {'WCU':>6} {'SQL':>4} {'RCU/reader':>10}")
    for readers in readers_steps:
        while made < readers:
            user = User.objects.create_user(
                username=f"digest{made}",
                password="!",
                email=f"digest{made}@example.com",
                email_verified=True,
                time_zone=DIGEST_ZONES[made % len(DIGEST_ZONES)],
                digest_hour=8,
            )
            preferences_update(user_id=str(user.pk), patch={"digest": "daily"})
            made += 1
        # 23:00 UTC is 08:00 in Tokyo (a quarter of the readers due); 03:15 UTC is nobody's 08:00.
        cases = (
            ("first after a gap (03:15 UTC)", "03:15", False),
            ("steady, nobody due (03:15 UTC)", "03:15", True),
            ("steady, Tokyo due (23:00 UTC)", "23:00", True),
        )
        for label, at, after_previous in cases:
            day += 1
            moment = ManualClock.at(f"2026-12-{day:02d}T{at}:00Z").utcnow()
            with clock_override(ManualClock(moment.timestamp())):
                if after_previous:
                    with clock_override(ManualClock((moment - timedelta(minutes=15)).timestamp())):
                        digests_send()  # the previous quarter hour's pass, unmetered
                with capacity_meter() as meter, CaptureQueriesContext(connection) as sql:
                    digests_send()
            print(
                f"  {readers:>14} {label:<34} {meter.read:6.1f} {meter.write:6.1f} {len(sql.captured_queries):>4}"
                f" {meter.read / readers:10.3f}"
            )


if __name__ == "__main__":
    main()
