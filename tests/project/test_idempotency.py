"""Idempotency-Key on the POSTs that create: a retry gets the first answer and creates
nothing, another body is a 422, and concurrent requests with one key create once."""

import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from rest_framework.test import APIClient

from delivery.models import Delivery
from project.http import idempotency
from project.models import IdempotencyRecord
from project.testing.harness import WAIT_SECONDS, wait_for
from social.models import Comment

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


@pytest.fixture(autouse=True)
def fast_passwords(settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def client_of(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user=user)
    return client


def post(client, path, data, key):
    return client.post(path, data, format="json", HTTP_IDEMPOTENCY_KEY=key)


def comments() -> list[Comment]:
    return list(Comment.scan(consistent_read=True))


def test_a_retry_with_the_same_key_gets_the_first_answer_and_creates_nothing(make_user):
    ann = client_of(make_user("ann"))
    first = post(ann, "/api/comments/", {"body": "hello"}, "key-1")
    again = post(ann, "/api/comments/", {"body": "hello"}, "key-1")
    assert first.status_code == again.status_code == 201
    assert again.json() == first.json()
    assert again["Idempotent-Replayed"] == "true" and "Idempotent-Replayed" not in first
    assert [comment.comment_id for comment in comments()] == [first.json()["id"]]
    other = post(ann, "/api/comments/", {"body": "hello"}, "key-2")  # a new key is a new comment
    assert other.status_code == 201 and len(comments()) == 2
    assert ann.post("/api/comments/", {"body": "hello"}, format="json").status_code == 201  # no key: as before
    assert len(comments()) == 3


def test_a_reply_and_a_delivery_are_created_once(make_user):
    staff = make_user("boss", is_staff=True)
    boss = client_of(staff)
    parent = boss.post("/api/comments/", {"body": "parent"}, format="json").json()["id"]
    replies = [post(boss, "/api/comments/", {"body": "re", "parent_id": parent}, "reply-1") for _ in range(3)]
    assert {answer.json()["id"] for answer in replies} == {replies[0].json()["id"]}
    assert len(comments()) == 2
    data = {"title": "Hi", "body": "Hello", "audience": {"all": True}}
    deliveries = [post(boss, "/api/deliveries/", data, "delivery-1") for _ in range(3)]
    assert [answer.status_code for answer in deliveries] == [201] * 3
    assert {answer.json()["id"] for answer in deliveries} == {deliveries[0].json()["id"]}
    assert len(list(Delivery.scan(consistent_read=True))) == 1


def test_the_same_key_with_another_body_is_a_422_naming_the_header(make_user):
    ann = client_of(make_user("ann"))
    assert post(ann, "/api/comments/", {"body": "hello"}, "k").status_code == 201
    answer = post(ann, "/api/comments/", {"body": "something else"}, "k")
    assert answer.status_code == 422
    assert answer.json()["code"] == "idempotency_key_reused" and answer.json()["Idempotency-Key"]
    assert len(comments()) == 1


def test_keys_belong_to_their_user(make_user):
    ann, bob = client_of(make_user("ann")), client_of(make_user("bob"))
    first = post(ann, "/api/comments/", {"body": "hello"}, "shared")
    second = post(bob, "/api/comments/", {"body": "hello"}, "shared")
    assert first.status_code == second.status_code == 201
    assert first.json()["id"] != second.json()["id"]


@pytest.mark.parametrize("key", ["", "x" * 256, "naïve", "with space"])
def test_a_malformed_key_is_a_400_naming_the_header(make_user, key):
    answer = post(client_of(make_user("ann")), "/api/comments/", {"body": "hello"}, key)
    assert answer.status_code == 400 and answer.json()["Idempotency-Key"]
    assert comments() == []


def test_a_failed_request_releases_its_key(make_user):
    ann = client_of(make_user("ann"))
    assert post(ann, "/api/comments/", {"body": ""}, "k").status_code == 400
    assert post(ann, "/api/comments/", {"body": "fixed"}, "k").status_code == 201
    assert len(comments()) == 1


def hold_the_first_creation(monkeypatch, release: threading.Event, started: threading.Event):
    """The request that claimed the key stops inside the view until `release` (a fault
    injected from outside, so the others find the claim pending on any machine)."""
    from social import apis

    real = apis.comment_create

    def held(**kwargs):
        started.set()
        assert release.wait(WAIT_SECONDS)
        return real(**kwargs)

    monkeypatch.setattr(apis, "comment_create", held)


def test_concurrent_requests_with_one_key_create_once(make_user, monkeypatch, settings):
    # The others wait for the held claim, which nobody takes over as abandoned, however long
    # a busy machine takes to bring all six requests to it.
    settings.IDEMPOTENCY_WAIT_SECONDS = WAIT_SECONDS
    settings.IDEMPOTENCY_LEASE_SECONDS = WAIT_SECONDS
    user = make_user("ann")
    release, started = threading.Event(), threading.Event()
    hold_the_first_creation(monkeypatch, release, started)
    waiting = set()  # the threads that found the key claimed
    real_get = IdempotencyRecord.get.__func__

    def counted_get(cls, *args, **kwargs):
        waiting.add(threading.get_ident())
        return real_get(cls, *args, **kwargs)

    monkeypatch.setattr(IdempotencyRecord, "get", classmethod(counted_get))
    answers = []

    def request():
        answers.append(post(client_of(user), "/api/comments/", {"body": "once"}, "race"))

    threads = [threading.Thread(target=request) for _ in range(6)]
    for thread in threads:
        thread.start()
    assert started.wait(WAIT_SECONDS)
    wait_for(lambda: len(waiting) == 5, what="every other request waiting on the claim")
    release.set()
    for thread in threads:
        thread.join(WAIT_SECONDS)
    assert [answer.status_code for answer in answers] == [201] * 6
    assert len({answer.json()["id"] for answer in answers}) == 1
    assert sum(1 for answer in answers if answer.get("Idempotent-Replayed")) == 5
    assert len(comments()) == 1


def test_a_retry_while_the_first_runs_gets_a_409_after_waiting(make_user, monkeypatch, settings):
    settings.IDEMPOTENCY_WAIT_SECONDS = 0
    settings.IDEMPOTENCY_LEASE_SECONDS = WAIT_SECONDS  # the held claim is never taken for abandoned
    user = make_user("ann")
    release, started = threading.Event(), threading.Event()
    hold_the_first_creation(monkeypatch, release, started)
    first = []
    thread = threading.Thread(target=lambda: first.append(post(client_of(user), "/api/comments/", {"body": "a"}, "k")))
    thread.start()
    assert started.wait(WAIT_SECONDS)
    retry = post(client_of(user), "/api/comments/", {"body": "a"}, "k")
    release.set()
    thread.join(WAIT_SECONDS)
    assert retry.status_code == 409 and retry["Retry-After"]
    assert retry.json()["code"] == "idempotency_in_progress" and retry.json()["Idempotency-Key"]
    assert first[0].status_code == 201
    again = post(client_of(user), "/api/comments/", {"body": "a"}, "k")
    assert again.json()["id"] == first[0].json()["id"] and len(comments()) == 1


def stale_record(user, key, *, fingerprint, **fields):
    record = IdempotencyRecord(
        f"{user.pk}#{key}",
        fingerprint=fingerprint,
        owner="dead-request",
        state=fields.pop("state", idempotency.PENDING),
        claimed_ms=fields.pop("claimed_ms", int(time.time() * 1000)),
        expires_at=fields.pop("expires_at", datetime.now(UTC) + timedelta(hours=1)),
        **fields,
    )
    record.save()


def test_a_claim_left_by_a_dead_request_is_taken_over_after_the_lease(make_user, settings):
    user = make_user("ann")
    fingerprint = idempotency.request_fingerprint(method="POST", path="/api/comments/", data={"body": "a"})
    stale_record(user, "k", fingerprint=fingerprint, claimed_ms=int(time.time() * 1000) - 61_000)
    answer = post(client_of(user), "/api/comments/", {"body": "a"}, "k")
    assert answer.status_code == 201 and len(comments()) == 1


def test_an_expired_answer_is_not_replayed(make_user):
    """TTL deletes late (DynamoDB Local never, AWS within days): a read checks expires_at itself."""
    user = make_user("ann")
    fingerprint = idempotency.request_fingerprint(method="POST", path="/api/comments/", data={"body": "a"})
    stale_record(
        user,
        "k",
        fingerprint=fingerprint,
        state=idempotency.DONE,
        status=201,
        response='{"id": "old"}',
        expires_at=datetime.now(UTC) - timedelta(seconds=1),
    )
    answer = post(client_of(user), "/api/comments/", {"body": "a"}, "k")
    assert answer.status_code == 201 and answer.json()["id"] != "old"
    assert IdempotencyRecord.get(f"{user.pk}#k", consistent_read=True).state == idempotency.DONE


def test_the_schema_documents_the_header_on_the_creating_posts(client):
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    for path in ("/api/comments/", "/api/deliveries/"):
        names = [parameter["name"] for parameter in schema["paths"][path]["post"].get("parameters", [])]
        assert "Idempotency-Key" in names, path


def test_an_answer_that_cannot_be_stored_still_reaches_the_client(make_user, monkeypatch, settings):
    """DynamoDB fails the store after the comment was created: the client gets its 201, and
    a retry finds the claim pending (409) rather than creating a second comment at once."""
    from pynamodb.exceptions import UpdateError

    def failing_update(self, *args, **kwargs):
        raise UpdateError("injected: the data store is unavailable")

    settings.IDEMPOTENCY_WAIT_SECONDS = 0
    settings.IDEMPOTENCY_LEASE_SECONDS = WAIT_SECONDS  # the pending claim is not abandoned however slow the run
    user = make_user("ann")
    with monkeypatch.context() as patch:
        patch.setattr(IdempotencyRecord, "update", failing_update)
        answer = post(client_of(user), "/api/comments/", {"body": "a"}, "k")
    assert answer.status_code == 201 and len(comments()) == 1
    retry = post(client_of(user), "/api/comments/", {"body": "a"}, "k")
    assert retry.status_code == 409 and len(comments()) == 1
