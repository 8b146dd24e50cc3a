"""A DynamoDB outage survived: the emulator is really killed, and started again once both
workers have met the outage.

Meanwhile every page and API answers 503 with Retry-After (never 500) and /readyz names
the failing check; real worker processes (the folder and the dispatcher) back off and
resume by themselves; afterwards counts, badges, feeds and deliveries are exact.
"""

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.db import connection
from rest_framework.test import APIClient

from delivery import selectors, services
from project.dynamo import clients as dynamo
from project.dynamo import local as dynamo_local
from project.dynamo.schema.create import tables_create
from project.operations import health
from project.testing.harness import wait_for
from project.testing.postgres import suite_database_url
from social.models import Like
from tests.delivery.helpers import message_counts

# Transactional: the workers read the users this test makes from its database (committed).
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]


class Emulator:
    """DynamoDB Local on its own port with its data on disk, so it can die and come back."""

    def __init__(self, db_path: Path):
        self.port = dynamo_local.free_port()
        self.db_path = db_path
        self.host = f"http://127.0.0.1:{self.port}"
        self.process = dynamo_local.start(port=self.port, db_path=db_path)

    def kill(self):
        self.process.kill()  # SIGKILL: no goodbye, as a crashed host or a pulled cable
        self.process.wait()

    def restart(self):
        self.process = dynamo_local.start(port=self.port, db_path=self.db_path)


@pytest.fixture
def emulator(tmp_path, settings):
    settings.LIKE_FOLD_AFTER_RESPONSE = False  # the folder process, not the request, notifies
    before = dynamo.endpoint()
    emulator = Emulator(tmp_path / "dynamodb")
    emulator.prefix = f"outage{uuid.uuid4().hex[:6]}_"
    dynamo.point_models_at(emulator.host, prefix=emulator.prefix)
    tables_create()
    health.remembered.forget()
    yield emulator
    dynamo_local.stop(emulator.process)
    dynamo.point_models_at(before.host, prefix=before.prefix)
    health.remembered.forget()


@pytest.fixture
def workers(emulator, tmp_path):
    # The workers share the test's PostgreSQL database, as workers share a deployment's.
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DEBUG", "SECRET_KEY"))},
        "ENV_FILE": "/dev/null",
        "SECRET_KEY": "outage-test-" + uuid.uuid4().hex,
        "DATABASE_URL": suite_database_url(connection.settings_dict["NAME"]),
        "DYNAMODB_HOST": emulator.host,
        "DYNAMODB_TABLE_PREFIX": emulator.prefix,
    }
    commands = {
        "fold_like_events": ["fold_like_events", "--loop", "--poll-seconds", "0.5"],
        "dispatch_deliveries": ["dispatch_deliveries", "--loop", "--no-progress", "--poll-seconds", "1"],
    }
    running = {}
    for name, command in commands.items():
        log = open(tmp_path / f"{name}.log", "w")
        running[name] = (
            subprocess.Popen(
                [sys.executable, "manage.py", *command], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT
            ),
            tmp_path / f"{name}.log",
        )
    yield running
    for process, _ in running.values():
        process.terminate()
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def client_for(user):
    from rest_framework.authtoken.models import Token

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=user)[0].key}")
    return client


def badge(client) -> int:
    return client.get("/api/notifications/unread-count/").json()["unread_count"]


def unread_likes(client) -> int:
    """The likes the unread like notifications hold (the badge counts each notification once)."""
    results = client.get("/api/notifications/").json()["results"]
    return sum(item["actor_count"] for item in results if item["kind"] == "like" and item["unread"])


def test_requests_answer_503_during_an_outage_and_everything_is_exact_afterwards(emulator, workers, make_user, client):
    author, *likers = [make_user(name) for name in ("ann", "ben", "cid", "dot")]
    as_author = client_for(author)
    comment_id = as_author.post("/api/comments/", {"body": "Clinic notes"}, format="json").json()["id"]
    for liker in likers[:2]:
        assert client_for(liker).put(f"/api/comments/{comment_id}/like/").status_code == 200
    wait_for(lambda: unread_likes(as_author) == 2, what="the folder notifying the first two likes")
    wait_for(lambda: badge(as_author) == 1, what="the badge: one notification, of two likes")

    logged_before = {name: len(log.read_text()) for name, (_, log) in workers.items()}
    emulator.kill()
    readiness = client.get("/readyz")
    assert readiness.status_code == 503
    assert readiness.json() == {"status": "unavailable"}  # what fails is the operator's (test_health.py)

    client.force_login(likers[2])
    as_liker = client_for(likers[2])
    attempts = {
        "timeline page": lambda: client.get("/"),
        "comment page": lambda: client.get(f"/c/{comment_id}/"),
        "popular page": lambda: client.get("/popular/"),
        "inbox page": lambda: client.get("/notifications/"),
        "like form": lambda: client.post(f"/c/{comment_id}/like/", {"action": "like"}),
        "comments API": lambda: as_liker.get("/api/comments/"),
        "comment API": lambda: as_liker.get(f"/api/comments/{comment_id}/"),
        "like API": lambda: as_liker.put(f"/api/comments/{comment_id}/like/"),
        "reply API": lambda: as_liker.post("/api/comments/", {"body": "Me too", "parent_id": comment_id}, "json"),
        "live poll": lambda: as_liker.get(f"/api/live/?comments={comment_id}"),
        "badge API": lambda: as_liker.get("/api/notifications/unread-count/"),
        "read-all API": lambda: as_liker.post("/api/notifications/read-all/"),
    }
    answers = {name: attempt() for name, attempt in attempts.items()}
    assert {name: answer.status_code for name, answer in answers.items()} == dict.fromkeys(attempts, 503)
    assert all(answer["Retry-After"] for answer in answers.values())
    assert answers["like API"].json()["code"] == "unavailable"
    # DynamoDB stays down until each worker has had a pass fail (however slowly a busy
    # machine runs them), so both really go through the outage and its back-off.
    for name, (_, log) in workers.items():
        wait_for(
            lambda log=log, name=name: "trying again with back-off" in log.read_text()[logged_before[name] :],
            what=f"{name} meeting the outage",
        )

    emulator.restart()
    wait_for(lambda: client.get("/readyz").status_code == 200, what="/readyz ready again")
    assert as_liker.put(f"/api/comments/{comment_id}/like/").json() == {"like_count": 3, "liked": True}
    # The dispatcher prepares the delivery (its audience read from the shared database) and sends it.
    delivery = services.delivery_create(
        title="Clinic closed Friday",
        body="Closed on Friday.",
        url=None,
        audience=services.Audience(kind="all"),
        created_by=make_user("staff", is_staff=True),
    )

    try:
        wait_for(
            lambda: selectors.delivery_get_consistent(delivery_id=delivery.delivery_id).status == "done",
            what="the dispatcher (alive through the outage) preparing and sending the delivery",
        )
    except AssertionError as error:
        raise AssertionError(f"{error}\n{workers['dispatch_deliveries'][1].read_text()[-3000:]}") from None
    users = [author, *likers]
    assert message_counts(delivery.delivery_id, [user.pk for user in users]) == {str(user.pk): 1 for user in users}
    wait_for(lambda: unread_likes(as_author) == 3, what="the folder notifying the third like")
    wait_for(lambda: badge(as_author) == 1 + 1, what="the badge: the likes' notification and the message")
    assert Like.count(comment_id, consistent_read=True) == 3
    assert as_author.get(f"/api/comments/{comment_id}/").json()["like_count"] == 3
    assert [badge(client_for(liker)) for liker in likers] == [1, 1, 1]  # the message; no reply was written
    for name, (process, log) in workers.items():
        assert process.poll() is None, f"{name} died: {log.read_text()[-2000:]}"
