"""Two machines, one dies: two complete instances (each its own supervisord, gunicorn and
workers: project/testing/instances.py) on one PostgreSQL database and one DynamoDB Local,
under load from people who like, unlike, reply and read through a client that balances
between the instances that are up. Halfway through, while a delivery to every account is
being dispatched by both instances, one instance is killed whole (SIGKILL to every process).

    .venv/bin/python bench/two_instances.py [--people 16] [--seconds 20] [--crowd 1000]

Prints, before and after the death: requests/s served, p50/p95 latency, requests that had
to go again to the other instance; then what the death cost (requests failed over, the
longest a person waited for an answer across it) and the exactness checks: every like
count equals the likes people were told they hold, every acknowledged reply exists once,
the delivery reached every account exactly once (its counters are added in the very
transactions that deliver). The machine is shared (2 cores, Locust-free: threads here):
read the ratios more than the rates.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from project.dynamo import local as dynamo_local  # noqa: E402
from project.testing.harness import served_environment, wait_for  # noqa: E402
from project.testing.instances import BIN, Balancer, Instance, instance_start, site_prepare  # noqa: E402
from project.testing.postgres import postgres_database_drop, postgres_database_url  # noqa: E402

ACCOUNTS_SCRIPT = """
import json
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from rest_framework.authtoken.models import Token
User = get_user_model()
password = make_password("bench-Two-instances-1")
people = User.objects.bulk_create([User(username=f"person{n}", password=password) for n in range(PEOPLE)])
User.objects.bulk_create([User(username=f"crowd{n}", password=password) for n in range(CROWD)])
boss = User.objects.create_superuser("boss", "boss@example.com", "bench-Two-instances-1")
print(json.dumps({"people": [Token.objects.create(user=u).key for u in people],
                  "staff": Token.objects.create(user=boss).key}))
"""


class Person:
    def __init__(self, number: int, token: str, comments: list[str], balancer: Balancer):
        self.number, self.token, self.comments, self.balancer = number, token, comments, balancer
        self.liked: dict[str, bool] = {}
        self.replies: list[str] = []
        self.random = random.Random(number)
        self.samples: list[tuple[float, float, int]] = []  # (ended at, seconds, status)

    def act(self) -> None:
        comment = self.random.choice(self.comments)
        roll = self.random.random()
        started = time.monotonic()
        if roll < 0.45:
            like = not self.liked.get(comment, False)
            answer = self.balancer.request(
                "PUT" if like else "DELETE", f"/api/comments/{comment}/like/", token=self.token
            )
            assert answer.status_code == 200, answer.text
            self.liked[comment] = answer.json()["liked"]
        elif roll < 0.55:
            key = uuid.uuid4().hex
            answer = self.balancer.request(
                "POST", "/api/comments/", token=self.token, key=key, json={"body": f"Reply {key}", "parent_id": comment}
            )
            assert answer.status_code in (201, 429), answer.text
            if answer.status_code == 201:
                self.replies.append(answer.json()["id"])
        elif roll < 0.8:
            answer = self.balancer.request("GET", "/api/comments/", token=self.token)
        else:
            answer = self.balancer.request("GET", "/api/notifications/unread-count/", token=self.token)
        self.samples.append((time.monotonic(), time.monotonic() - started, answer.status_code))


def figures(samples: list[tuple[float, float, int]], start: float, end: float) -> str:
    window = [s for s in samples if start <= s[0] < end]
    if not window:
        return "no requests"
    latencies = sorted(s[1] for s in window)
    p95 = latencies[int(0.95 * (len(latencies) - 1))]
    statuses = Counter(s[2] for s in window)
    return (
        f"{len(window) / (end - start):6.1f} req/s  p50 {statistics.median(latencies) * 1000:5.0f} ms  "
        f"p95 {p95 * 1000:5.0f} ms  statuses {dict(statuses)}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--people", type=int, default=16, help="people acting at once (default 16)")
    parser.add_argument("--seconds", type=float, default=20.0, help="load before and after the death (default 20)")
    parser.add_argument("--crowd", type=int, default=1000, help="more accounts the delivery goes to (default 1000)")
    options = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="bench-two-"))
    emulator = dynamo_local.start(port=(dynamo_port := dynamo_local.free_port()))
    database_url = postgres_database_url("bench_two_instances")
    environment = served_environment(
        dynamodb_host=f"http://127.0.0.1:{dynamo_port}",
        table_prefix="two_",
        database_url=database_url,
        WEB_CONCURRENCY="1",
        RATE_LIMITS_ENABLED="False",
        DELIVERY_CHUNK_SIZE="10",
        DELIVERY_LEASE_SECONDS="10",
        IDEMPOTENCY_LEASE_SECONDS="20",
        LOG_LEVEL="WARNING",
    )
    instances: list[Instance] = []
    try:
        site_prepare(environment)
        script = ACCOUNTS_SCRIPT.replace("PEOPLE", str(options.people)).replace("CROWD", str(options.crowd))
        made = subprocess.run(
            [str(BIN / "python"), "manage.py", "shell", "-c", script],
            cwd=ROOT,
            env=environment,
            capture_output=True,
            text=True,
            check=True,
        )
        accounts = json.loads(made.stdout.strip().splitlines()[-1])
        for label in ("a", "b"):
            port = dynamo_local.free_port()
            instances.append(instance_start(label, environment=environment, port=port, folder=folder / label))
        balancer = Balancer(list(instances))
        staff = accounts["staff"]
        comments = [
            balancer.request("POST", "/api/comments/", token=t, key=uuid.uuid4().hex, json={"body": "Hello"}).json()[
                "id"
            ]
            for t in accounts["people"][:8]
        ]
        people = [Person(n, t, comments, balancer) for n, t in enumerate(accounts["people"])]
        stop = threading.Event()
        errors: list[BaseException] = []

        def run(person: Person) -> None:
            try:
                while not stop.is_set():
                    person.act()
            except BaseException as error:
                errors.append(error)

        threads = [threading.Thread(target=run, args=(p,), daemon=True) for p in people]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        time.sleep(options.seconds / 2)
        delivery = balancer.request(
            "POST",
            "/api/deliveries/",
            token=staff,
            key=uuid.uuid4().hex,
            json={"title": "Maintenance", "body": "Tonight at 22:00.", "audience": {"all": True}},
        ).json()["id"]
        wait_for(
            lambda: balancer.request("GET", f"/api/deliveries/{delivery}/", token=staff).json()["delivered_count"] > 0,
            what="the delivery under way",
        )
        time.sleep(max(0.0, started + options.seconds - time.monotonic()))
        before_failovers = sum(balancer.failed_over.values())
        in_flight = balancer.request("GET", f"/api/deliveries/{delivery}/", token=staff).json()
        killed_at = time.monotonic()
        instances[0].kill()
        time.sleep(options.seconds)
        stop.set()
        for thread in threads:
            thread.join(timeout=120)
        ended = time.monotonic()
        if errors:
            raise errors[0]

        survivor = Balancer([instances[1]])
        done = wait_for(
            lambda: (
                (d := survivor.request("GET", f"/api/deliveries/{delivery}/", token=staff).json())["status"] == "done"
                and d
            ),
            what="the delivery finished",
            seconds=300,
        )
        delivery_seconds = time.monotonic() - killed_at
        samples = [s for p in people for s in p.samples]
        longest_wait = max((s[1] for s in samples if s[0] >= killed_at), default=0.0)
        counts_exact = all(
            survivor.request("GET", f"/api/comments/{c}/", token=staff).json()["like_count"]
            == sum(p.liked.get(c, False) for p in people)
            for c in comments
        )
        replied = [r for p in people for r in p.replies]
        replies_exact = all(
            survivor.request("GET", f"/api/comments/{r}/", token=staff).status_code == 200 for r in replied
        )
        listed = Counter()
        for c in comments:
            cursor = ""
            while True:
                page = survivor.request("GET", f"/api/comments/{c}/replies/?cursor={cursor}", token=staff).json()
                listed.update(reply["id"] for reply in page["results"])
                if not (cursor := page["next"]):
                    break

        print(f"two instances, {options.people} people acting at once, {options.seconds:.0f} s each side of the death")
        print(f"  both up      : {figures(samples, started, killed_at)}")
        print(f"  one survivor : {figures(samples, killed_at, ended)}")
        print(
            f"  requests sent again elsewhere: {before_failovers} before the death, "
            f"{sum(balancer.failed_over.values()) - before_failovers} after ({dict(balancer.failed_over)})"
        )
        print(f"  longest answer after the death (a request caught in it): {longest_wait * 1000:.0f} ms")
        print(
            f"  delivery at the death: {in_flight['delivered_count']} of {in_flight['total_targets']}; "
            f"finished {delivery_seconds:.1f} s after it (lease {environment['DELIVERY_LEASE_SECONDS']} s)"
        )
        print(
            f"  delivered {done['delivered_count']} of {done['total_targets']} (exactly once: "
            f"{done['delivered_count'] == done['total_targets']})"
        )
        print(f"  like counts equal the likes people hold: {counts_exact}")
        print(
            f"  acknowledged replies, each listed once: {replies_exact and all(listed[r] == 1 for r in replied)} "
            f"({len(replied)} replies)"
        )
        return 0 if counts_exact and replies_exact and done["delivered_count"] == done["total_targets"] else 1
    finally:
        for instance in instances:
            instance.stop()
        dynamo_local.stop(emulator)
        postgres_database_drop(database_url)


if __name__ == "__main__":
    sys.exit(main())
