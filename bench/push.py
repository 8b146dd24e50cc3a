"""Web Push: from the event's commit to the push service's 201, at N subscriptions receiving at
once, and the DynamoDB units one push costs; what a push to 10,000 people costs and takes.

    .venv/bin/python bench/push.py [--people 100] [--threads 8] [--profile]

`--people` people, each with push on for staff messages and one browser subscribed at a local
push service stand-in (tests/notifications/push_service.py: it checks the VAPID signature and
decrypts every push, as a vendor's service would, on this machine). A staff message to all of
them is dispatched (its transactions commit each feed entry with its push), then one sender
works through the push queue as `send_push` does (`--threads` pushes at once), in this process.
Each latency runs from the feed entry's commit to the stand-in's answer (the sender starts once
the whole dispatch committed: the first pushes wait for the last; a `send_push` worker polling
meanwhile starts within a second of the first), and is also given from the sender's start. Units: every read and write the sender made,
divided by the pushes (ReturnConsumedCapacity, as bench/costs.py).
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import pstats
import time

from _setup import PRICE_PER_MILLION_READS, PRICE_PER_MILLION_WRITES, bench_environment, capacity_meter


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--people", type=int, default=100)
    parser.add_argument("--threads", type=int, default=8, help="pushes one sender sends at once (send_push --threads)")
    parser.add_argument("--profile", action="store_true", help="print where the sender's time goes (cProfile)")
    parser.add_argument("--sort", default="cumulative", help="with --profile: cumulative or tottime")
    args = parser.parse_args()

    with bench_environment():
        from django.contrib.auth import get_user_model
        from django.test import override_settings

        from delivery import dispatch as delivery_dispatch
        from delivery import preparation as delivery_preparation
        from delivery import services as delivery_services
        from notifications.mail.queue import PUSH
        from notifications.mail.selectors import mail_queue_due
        from notifications.models import MailQueue
        from notifications.preferences.services import preferences_update
        from notifications.push.keys import vapid_key_generate, vapid_public_key
        from notifications.push.sender import PushSender
        from notifications.push.services import subscription_add
        from tests.notifications.push_service import push_service_start

        settings = {
            "VAPID_PRIVATE_KEY": vapid_key_generate(),
            "LOCAL_PLAIN_HTTP": True,
            "PUSH_SERVICE_HOSTS": ["127.0.0.1"],
            "NOTIFY_PRESENT_SECONDS": 0,
        }
        with override_settings(**settings):
            service, server = push_service_start(vapid_public_key=vapid_public_key())
            users = get_user_model().objects
            people, user_of = [], {}
            for n in range(args.people):
                person = users.create_user(username=f"reader{n}", password="!")
                preferences_update(user_id=str(person.pk), patch={"kinds": {"message": {"push": True}}}, limited=False)
                browser = service.subscribe()
                subscription_add(user_id=str(person.pk), data=browser.to_json())
                user_of[browser.token] = str(person.pk)
                people.append(person)

            # A staff message to all of them: one dispatch commits every feed entry and its push.
            staff = users.create_user(username="staff", password="!", is_staff=True)
            delivery = delivery_services.delivery_create(
                title="Maintenance tonight",
                body="The site is read-only from 22:00 to 22:30 UTC.",
                url=None,
                audience=delivery_services.Audience(kind="usernames", usernames=[p.username for p in people]),
                created_by=staff,
            )
            delivery_preparation.delivery_prepare(delivery_id=delivery.delivery_id)
            started = time.time()
            report = delivery_dispatch.delivery_dispatch(
                delivery_id=delivery.delivery_id,
                owner="bench",
                batch_size=delivery_services.BATCH_SIZE_MAX,
                lease_seconds=60,
            )
            committed = time.time()
            assert report.delivered == args.people, report
            created = {item.user_id: int(item.created_at) / 1000 for item in mail_queue_due(channel=PUSH)}
            profiler = cProfile.Profile() if args.profile else None
            with capacity_meter() as meter, profiler or contextlib.nullcontext():
                sending, cpu = time.time(), time.process_time()
                sender = PushSender(threads=args.threads)
                while True:  # the send_push worker's passes, in this process (the accounts are in its SQLite)
                    due = mail_queue_due(channel=PUSH)
                    if not due:
                        break
                    for _ in sender.process(due, stopped=lambda: False):
                        pass
                sender.close()
            finished, cpu = time.time(), time.process_time() - cpu
            server.shutdown()

        if profiler is not None:
            pstats.Stats(profiler).sort_stats(args.sort).print_stats(30)
        delivered = service.delivered()
        latencies = sorted(one.at - created[user_of[one.token]] for one in delivered)
        assert service.refused == [], service.refused[:3]
        assert MailQueue.count() == 0 or len(delivered) < args.people
        pushes = len(delivered)
        read, write = meter.read / max(1, pushes), meter.write / max(1, pushes)
        # The replies' own units are metered too: what the sender alone costs is the rest.
        print(f"{pushes} of {args.people} pushes taken by the stand-in, one sender sending {args.threads} at once")
        print(f"dispatch committed in {committed - started:.2f} s; last push {finished - committed:.2f} s after it")
        if latencies:
            p50 = latencies[len(latencies) // 2]
            p95 = latencies[min(len(latencies) - 1, int(0.95 * len(latencies)))]
            print(f"commit -> 201: p50 {p50 * 1000:.0f} ms, p95 {p95 * 1000:.0f} ms (goal p95 <= 3000 ms)")
            own = sorted(one.at - sending for one in delivered)
            print(
                f"sender start -> 201: p50 {own[len(own) // 2] * 1000:.0f} ms, "
                f"p95 {own[min(len(own) - 1, int(0.95 * len(own)))] * 1000:.0f} ms"
            )
        print(
            f"CPU of this process per push: {cpu / max(1, pushes) * 1000:.1f} ms (the sender, and the stand-in's "
            f"decryption); wall per push {(finished - sending) / max(1, pushes) * 1000:.1f} ms"
        )
        print(f"units per push (the sender's reads and writes): {read:.1f} RCU {write:.1f} WCU")
        per_push_dollars = read * PRICE_PER_MILLION_READS / 1e6 + write * PRICE_PER_MILLION_WRITES / 1e6
        rate = pushes / max(1e-9, finished - committed)
        print(
            f"a push to 10,000 people at these units: ${per_push_dollars * 10_000:.2f} on demand, "
            f"about {10_000 / rate / 60:.1f} min for one sender at this rate "
            f"({rate:.0f} pushes/s on this machine)"
        )


if __name__ == "__main__":
    main()
