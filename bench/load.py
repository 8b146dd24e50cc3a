"""Load held: the app served as `make run` serves it (gunicorn and the background workers
under supervisord, deploy/supervisord.conf) on its own DynamoDB Local and ports, driven by Locust.

    .venv/bin/python bench/load.py [--stage-seconds 35] [--outage]

Simulated people (bench/_locustfile.py) poll GET /api/live/ every 2 s and, between polls,
open the timeline or a comment, like or unlike, reply, look at the badge or the inbox.
Stages: 10, 50, 100 and 200 people, then 100 people on one comment. For each stage: requests/s,
p50/p95/p99 per route, errors by status (and dropped connections), the accepted answers'
latency beside the refusals' (503), the CPU each part used
(web = gunicorn, workers, DynamoDB Local, the load client itself) from /proc. Before the
stages, DynamoDB Local's own ceiling on this machine: raw boto3 Queries from 16 threads,
with its CPU per call, so the web tier's figures read as a ratio. After each stage,
nothing lost: the workers catch up (within 15 s), every like count equals its stored
likes, every badge equals its unread notifications. `--outage` kills DynamoDB Local
(SIGKILL) for 10 s in the middle of the 50-people stage.

The machine is shared (2 cores; Locust itself takes one): read ratios more than rates.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
sys.path.insert(0, str(ROOT))
from project.dynamo import local as dynamo_local  # noqa: E402  (no Django needed to start the emulator)
from project.testing.harness import cmdline, descendants, http_status, served_environment, wait_for  # noqa: E402

ACCOUNTS = 200
COMMENTS = 40
CATCH_UP_SECONDS = 15  # the workers' work of a stage is done this soon after it ends
CATCH_UP_WAIT_SECONDS = 120  # how long a slow catch-up is timed before the bench says what is left
TICK = os.sysconf("SC_CLK_TCK")


# --- processes and their CPU ----------------------------------------------------


def cpu_seconds(pid: int) -> float:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


class CpuMeter:
    """CPU seconds per part, over the processes alive at each reading (each pid read once)."""

    def __init__(self, manager_pid: int, emulator):
        self.manager_pid = manager_pid
        self.emulator = emulator
        self.client_pids: list[int] = []

    def reading(self) -> dict[int, tuple[str, float]]:
        parts = {}
        for pid in descendants(self.manager_pid):
            command = cmdline(pid)
            part = "web" if "gunicorn" in command else "workers" if "manage.py" in command else None
            if part:
                parts[pid] = (part, cpu_seconds(pid))
        parts[self.emulator.process.pid] = ("DynamoDB Local", cpu_seconds(self.emulator.process.pid))
        for pid in self.client_pids:
            for one in (pid, *descendants(pid)):
                parts[one] = ("load client", cpu_seconds(one))
        return parts

    @staticmethod
    def used(before: dict, after: dict) -> Counter:
        used = Counter()
        for pid, (part, seconds) in after.items():
            used[part] += max(0.0, seconds - before.get(pid, (part, 0.0))[1])  # a dead pid reads 0
        return used


# --- the served app -----------------------------------------------------------------


class Emulator:
    def __init__(self, db_path: Path | None):
        self.port = dynamo_local.free_port()
        self.db_path = db_path
        self.host = f"http://127.0.0.1:{self.port}"
        self.process = dynamo_local.start(port=self.port, db_path=db_path)

    def outage(self, seconds: float) -> None:
        self.process.kill()
        self.process.wait()
        time.sleep(seconds)
        self.process = dynamo_local.start(port=self.port, db_path=self.db_path)


def environment(emulator: Emulator, folder: Path, port: int) -> dict:
    return served_environment(
        dynamodb_host=emulator.host,
        table_prefix="load_",
        database_url=f"sqlite:///{folder / 'db.sqlite3'}",
        HOST="127.0.0.1",
        PORT=str(port),
        RUN_DIR=str(folder),  # supervisord's control socket
        LOG_LEVEL="WARNING",
    )


def prepare_data(folder: Path) -> dict:
    """Tables, accounts (token + session), comments; returns what the people need."""
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY, get_user_model
    from django.contrib.auth.hashers import make_password
    from django.contrib.sessions.backends.db import SessionStore
    from django.core.management import call_command
    from rest_framework.authtoken.models import Token

    from actions.comments import comment_create
    from project.dynamo.schema.create import tables_create

    call_command("migrate", verbosity=0)
    tables_create()
    call_command("activity_tables", verbosity=0)
    user_model = get_user_model()
    password = make_password("load-pass-2026")
    user_model.objects.bulk_create(
        user_model(username=f"person{n}", display_name=f"Person {n}", password=password) for n in range(ACCOUNTS)
    )
    accounts = []
    for user in user_model.objects.order_by("pk"):
        token = Token.objects.create(user=user)
        session = SessionStore()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]  # one the site accepts: pages signed in
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.create()
        accounts.append({"user_id": str(user.pk), "token": token.key, "sessionid": session.session_key})
    comments = [
        comment_create(author_id=accounts[n % ACCOUNTS]["user_id"], body=f"Case notes {n}").comment_id
        for n in range(COMMENTS)
    ]
    data = {"accounts": accounts, "comments": comments, "hot": comments[0]}
    (folder / "load.json").write_text(json.dumps(data))
    return data


def signed_in_check(url: str, account: dict) -> None:
    """The people's pages are a signed-in person's (the post form shows): a session the site does
    not accept would time the signed-out pages instead, which cost less."""
    request = urllib.request.Request(f"{url}/", headers={"Cookie": f"sessionid={account['sessionid']}"})
    with urllib.request.urlopen(request, timeout=30) as answer:
        if b'class="card post-form"' not in answer.read():
            raise SystemExit("the simulated people's sessions are not signed in: their pages would be signed-out ones")


# --- DynamoDB Local's ceiling ---------------------------------------------------------


def dynamodb_ceiling(emulator: Emulator, comments: list[str], seconds: float = 8.0) -> tuple[float, float]:
    """Raw eventually consistent Queries (the live poll's kind) with the bare botocore client
    from 16 threads: calls/s and
    DynamoDB Local's CPU ms per call."""
    import botocore.session
    from botocore.config import Config

    client = botocore.session.get_session().create_client(
        "dynamodb",
        endpoint_url=emulator.host,
        region_name="us-east-1",
        aws_access_key_id="local",
        aws_secret_access_key="local",
        config=Config(max_pool_connections=32),
    )
    stop = time.monotonic() + seconds
    calls = Counter()

    def caller(number: int) -> None:
        n = number
        while time.monotonic() < stop:
            client.query(
                TableName="load_counters",
                KeyConditionExpression="#k = :k",
                ExpressionAttributeNames={"#k": "counter_key"},
                ExpressionAttributeValues={":k": {"S": f"like#{comments[n % len(comments)]}"}},
            )
            calls[number] += 1
            n += 1

    before = cpu_seconds(emulator.process.pid)
    started = time.monotonic()
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(caller, range(16)))
    elapsed = time.monotonic() - started
    total = sum(calls.values())
    return total / elapsed, (cpu_seconds(emulator.process.pid) - before) * 1000 / max(1, total)


# --- checks: nothing lost -------------------------------------------------------------


def caught_up_after(seconds: float) -> float | None:
    """Seconds until no like event, feed retry or due counter is pending (None: not within `seconds`)."""
    from notifications.feed.selectors import feed_retries_due
    from notifications.like_fold import like_events_pending_comments
    from social.aggregation import counters_pending_count

    started = time.monotonic()
    while time.monotonic() - started < seconds:
        try:
            if not like_events_pending_comments() and not feed_retries_due(limit=1) and not counters_pending_count():
                return time.monotonic() - started
        except Exception:  # DynamoDB Local coming back after --outage
            pass
        time.sleep(0.5)
    return None


def pending() -> str:
    """What the workers still have to do."""
    from notifications.feed.selectors import feed_retries_due
    from notifications.like_fold import like_events_pending_comments
    from social.aggregation import counters_pending_count

    retries = feed_retries_due(limit=1000)
    return (
        f"like events on {len(like_events_pending_comments())} comments, {len(retries)} feed retries due,"
        f" {counters_pending_count()} counters due"
    )


def checks(data: dict) -> list[str]:
    """Every like count equals its stored likes; every badge equals its unread notifications."""
    from django.conf import settings

    from notifications.models import Feed, LikeUnread, UnreadCount
    from social.models import Like
    from social.selectors import like_counts

    problems = []
    counts = like_counts(comment_ids=data["comments"])
    for comment_id in data["comments"]:
        stored = Like.count(comment_id, consistent_read=True)
        if counts[comment_id] != stored:
            problems.append(f"comment {comment_id[:8]}: count {counts[comment_id]}, {stored} likes stored")
    badges_checked = 0
    for account in data["accounts"]:
        user_id = account["user_id"]
        sources = {item.source: int(item.count) for item in UnreadCount.query(user_id, consistent_read=True)}
        for unread in LikeUnread.query(user_id, consistent_read=True):
            if unread.num_likes > settings.LIKE_NOTIFICATION_LIKERS_MAX:
                continue  # overflow likes undone stay counted until read (docs/explanation/likes.md "Like events and the fold")
            if sources.get(f"like#{unread.comment_id}", 0) != unread.num_likes:
                problems.append(f"user {user_id}: badge item for {unread.comment_id[:8]} != {unread.num_likes}")
        try:
            feed = Feed.get(user_id, consistent_read=True)
            unread_entries = sum(1 for entry in feed.entries if not entry.read)
        except Feed.DoesNotExist:
            unread_entries = 0
        if sources.get("feed", 0) != unread_entries:
            problems.append(f"user {user_id}: feed badge {sources.get('feed', 0)} != {unread_entries} unread entries")
        badges_checked += 1
    return problems or [f"like counts exact ({len(data['comments'])} comments), badges match ({badges_checked} people)"]


# --- stages -------------------------------------------------------------------------


def run_stage(name, people, mode, seconds, *, url, env, folder, meter, outage=None) -> dict:
    prefix = folder / re.sub(r"\W+", "_", name)
    command = [str(BIN / "locust"), "-f", str(ROOT / "bench" / "_locustfile.py"), "--headless"]
    command += ["-u", str(people), "-r", str(max(1, people // 5)), "-t", f"{seconds}s", "--host", url]
    command += ["--csv", str(prefix), "--only-summary", "--loglevel", "ERROR", "--stop-timeout", "5"]
    client = subprocess.Popen(
        command,
        env={**env, "LOAD_DATA": str(folder / "load.json"), "LOAD_MODE": mode, "LOAD_SAMPLES": f"{prefix}_samples.csv"},
        stdout=subprocess.DEVNULL,
        stderr=open(folder / "locust.log", "a"),  # noqa: SIM115
    )
    meter.client_pids = [client.pid]
    before = meter.reading()
    if outage:
        threading.Timer(seconds / 3, outage).start()
    time.sleep(seconds - 1)
    after = meter.reading()  # the client still running: its own CPU is counted too
    client.wait()
    return {"name": name, "people": people, "mode": mode, "cpu": CpuMeter.used(before, after), "csv": prefix}


def _pct(samples: list[float], fraction: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))] if ordered else 0.0


def answered(stage: dict) -> list[str]:
    """Accepted answers' latency against refusals' (503), from each request's status and time."""
    accepted: list[float] = []
    refused: list[float] = []
    try:
        with open(f"{stage['csv']}_samples.csv") as file:
            for _route, status, ms in csv.reader(file):
                (refused if status == "503" else accepted).append(float(ms))
    except FileNotFoundError:
        return ["   (no per-request samples)"]
    stage["accepted"], stage["refused"] = accepted, refused
    line = (
        f"   accepted {len(accepted)}: p50 {_pct(accepted, 0.5):.0f}, p95 {_pct(accepted, 0.95):.0f}, "
        f"p99 {_pct(accepted, 0.99):.0f} ms"
    )
    if refused:
        line += f"; refused (503) {len(refused)}: p50 {_pct(refused, 0.5):.0f}, p95 {_pct(refused, 0.95):.0f} ms"
    return [line]


# The same stages measured on this machine before the shared reads, the cheap live poll and
# the waiting shedder (people: offered req/s, p50, p95, 503s of requests, web CPU ms/request).
BEFORE = {
    10: (8.1, 22, 290, "0 of 195", 39.0),
    50: (40.9, 67, 290, "19 of 1,394", 19.3),
    100: (74.2, 170, 650, "979 of 2,601", 13.5),
}


def summary(stages: list[dict], seconds: float) -> list[str]:
    """A table for the README: each stage beside the figures before."""
    lines = [
        "| people | offered | served (not 503) | p50 / p95 | 503 | web CPU per request | before: offered, p50 / p95, 503, CPU |",
        "|---|---|---|---|---|---|---|",
    ]
    for stage in stages:
        accepted, refused = stage.get("accepted", []), stage.get("refused", [])
        requests = max(1, stage["requests"])
        web = stage["cpu"]["web"] * 1000 / requests
        before = BEFORE.get(stage["people"]) if stage["mode"] == "spread" else None
        then = f"{before[0]} req/s, {before[1]} / {before[2]} ms, {before[3]}, {before[4]} ms" if before else "-"
        lines.append(
            f"| {stage['name']} | {requests / seconds:.1f} req/s "
            f"| {requests / seconds * len(accepted) / max(1, len(accepted) + len(refused)):.1f} req/s "
            f"| {_pct(accepted, 0.5):.0f} / {_pct(accepted, 0.95):.0f} ms | {len(refused)} of {requests:,} "
            f"| {web:.1f} ms | {then} |"
        )
    return lines


def report(stage: dict, seconds: float) -> list[str]:
    """The stage's figures from Locust's CSV files; sets stage["requests"]."""
    with open(f"{stage['csv']}_stats.csv") as file:
        rows = list(csv.DictReader(file))
    failures = Counter()
    try:
        with open(f"{stage['csv']}_failures.csv") as file:
            for failure in csv.DictReader(file):
                status = re.search(r"\b([45]\d\d)\b", failure["Error"])
                failures[status.group(1) if status else f"dropped ({failure['Error'][:40]})"] += int(
                    failure["Occurrences"]
                )
    except FileNotFoundError:
        pass
    total = next(row for row in rows if row["Name"] == "Aggregated")
    requests = stage["requests"] = int(total["Request Count"])
    lines = [
        f"== {stage['name']}: {float(total['Requests/s']):.1f} requests/s, {requests} requests, "
        f"p50 {total['50%']} ms, p95 {total['95%']} ms, p99 {total['99%']} ms",
        f"   errors: {dict(failures) or 'none'}",
        f"   {'route':<14} {'requests':>8} {'req/s':>7} {'p50':>6} {'p95':>6} {'p99':>6} {'errors':>6}  (ms)",
    ]
    for row in rows:
        if row["Name"] != "Aggregated":
            lines.append(
                f"   {row['Name']:<14} {row['Request Count']:>8} {float(row['Requests/s']):>7.1f} "
                f"{row['50%']:>6} {row['95%']:>6} {row['99%']:>6} {row['Failure Count']:>6}"
            )
    cpu = stage["cpu"]
    lines.append(
        "   CPU: "
        + ", ".join(
            f"{part} {used:.1f} s ({used * 1000 / max(1, requests):.1f} ms/request)" for part, used in cpu.items()
        )
        + f" over {seconds} s"
    )
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stage-seconds", type=int, default=35)
    parser.add_argument("--outage", action="store_true", help="kill DynamoDB Local for 10 s in the 50-people stage")
    parser.add_argument(
        "--only", help="run only these stages: people counts of the spread stages, and hot, e.g. 100,200,hot"
    )
    options = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="load-"))
    emulator = Emulator(folder / "dynamodb" if options.outage else None)
    port = dynamo_local.free_port()
    env = environment(emulator, folder, port)
    os.environ.update(env)
    print(f"DynamoDB Local {emulator.host}; app http://127.0.0.1:{port}; files in {folder}", flush=True)
    data = prepare_data(folder)
    manager = subprocess.Popen(
        [str(BIN / "supervisord"), "-c", "deploy/supervisord.conf"],
        cwd=ROOT,
        env=env,
        stdout=open(folder / "supervisord.log", "w"),  # noqa: SIM115
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        wait_for(lambda: http_status(f"http://127.0.0.1:{port}/readyz") == 200, what="the app ready")
        signed_in_check(f"http://127.0.0.1:{port}", data["accounts"][0])
        rate, cpu_per_call = dynamodb_ceiling(emulator, data["comments"])
        print(f"DynamoDB Local's ceiling: {rate:.0f} raw Queries/s (16 threads), {cpu_per_call:.2f} ms of its CPU each")
        meter = CpuMeter(manager.pid, emulator)
        stages = [("10 people", 10, "spread"), ("50 people", 50, "spread"), ("100 people", 100, "spread")]
        stages += [("200 people", 200, "spread"), ("100 people, one comment", 100, "hot")]
        if options.only:
            wanted = set(options.only.split(","))
            stages = [stage for stage in stages if (str(stage[1]) if stage[2] == "spread" else stage[2]) in wanted]
        done = []
        for name, people, mode in stages:
            outage = (lambda: emulator.outage(10)) if options.outage and people == 50 else None
            stage = run_stage(
                name, people, mode, options.stage_seconds, url=f"http://127.0.0.1:{port}", env=env, folder=folder,
                meter=meter, outage=outage,
            )  # fmt: skip
            lines = report(stage, options.stage_seconds) + answered(stage)
            done.append(stage)
            if cpu_per_call and stage["requests"] and stage["cpu"]["DynamoDB Local"]:
                per_request = stage["cpu"]["DynamoDB Local"] * 1000 / stage["requests"]
                web = stage["cpu"]["web"] * 1000 / stage["requests"]
                lines.append(
                    f"   per request: web {web:.1f} ms CPU against DynamoDB Local's {per_request:.1f} ms "
                    f"(= {per_request / cpu_per_call:.1f} raw Queries' worth; web/DynamoDB {web / max(per_request, 0.01):.1f}x)"
                )
            caught_up = caught_up_after(CATCH_UP_WAIT_SECONDS)
            lines.append(
                f"   workers caught up in {caught_up:.1f} s" + ("" if caught_up <= CATCH_UP_SECONDS else " (SLOW)")
                if caught_up is not None
                else f"   workers NOT caught up within {CATCH_UP_WAIT_SECONDS} s: {pending()}"
            )  # fmt: skip
            lines += [f"   {line}" for line in checks(data)]
            print("\n".join(lines), flush=True)
        print("\n".join(["", *summary(done, options.stage_seconds)]), flush=True)
    finally:
        # Every process, noted before supervisord stops them: whatever outlives it is killed.
        started = descendants(manager.pid)
        manager.send_signal(signal.SIGTERM)
        try:
            manager.wait(timeout=60)
        except subprocess.TimeoutExpired:
            manager.kill()
        for pid in started:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)  # whatever outlived supervisord's own SIGTERM and SIGKILL
        dynamo_local.stop(emulator.process)
    return 0


if __name__ == "__main__":
    sys.exit(main())
