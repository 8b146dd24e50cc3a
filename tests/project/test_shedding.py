"""Overload and slow clients (project/serving/shedding.py): a request waits for a slot and is refused
only when it could not start in time (CoDel-like), and its body is read before it takes one,
within a deadline. Nothing here races a clock: slots are held by events, the queue's switch
is moved by the manual clock, and a body deadline is only met by a client that never sends."""

import json
import socket
import threading

import pytest
from django.core.handlers.wsgi import WSGIRequest
from django.http import HttpResponse
from django.test import Client

from project.clock import ManualClock, clock_override
from project.serving import shedding
from project.testing.harness import WAIT_SECONDS, in_threads, wait_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def held_timeline(monkeypatch):
    """The comment list's read held until `release` is set; `entered` counts the requests inside."""
    from social import selectors

    release = threading.Event()
    entered = []
    real = selectors.comment_timeline

    def held(*args, **kwargs):
        entered.append(1)
        release.wait(WAIT_SECONDS)
        return real(*args, **kwargs)

    monkeypatch.setattr(selectors, "comment_timeline", held)
    yield entered, release
    release.set()


@pytest.fixture
def slots(settings, monkeypatch):
    # This process's own slots, fresh: an earlier test's refusal would otherwise count as a
    # recent one and put newcomers on the short wait.
    monkeypatch.setattr(shedding, "in_flight", shedding.InFlight())
    settings.WEB_MAX_IN_FLIGHT = 1
    settings.WEB_QUEUE_TIMEOUT = WAIT_SECONDS
    # Real time never makes the queue stand long enough here (a slow machine could): the
    # switch's test moves the manual clock past a short interval itself.
    settings.WEB_QUEUE_INTERVAL = WAIT_SECONDS
    settings.WEB_QUEUE_TARGET = 0.0  # a newcomer in sustained overload is refused at once
    yield settings
    assert shedding.in_flight.count == 0 and shedding.in_flight.waiting == 0


def get_in_thread(path: str, answers: list) -> threading.Thread:
    thread = threading.Thread(target=lambda: answers.append(Client().get(path)), daemon=True)
    thread.start()
    return thread


def test_a_request_finding_every_slot_busy_waits_for_one_and_is_served(slots, held_timeline):
    entered, release = held_timeline
    answers: list = []
    first = get_in_thread("/api/comments/", answers)
    wait_for(lambda: len(entered) == 1, what="the first request inside")
    second = get_in_thread("/api/comments/", answers)
    wait_for(lambda: shedding.in_flight.waiting == 1, what="the second request waiting for the slot")
    assert answers == []  # waiting, not refused
    release.set()
    first.join(WAIT_SECONDS)
    second.join(WAIT_SECONDS)
    assert [answer.status_code for answer in answers] == [200, 200]


def test_a_burst_of_four_times_the_slots_is_served_whole(slots, held_timeline):
    slots.WEB_MAX_IN_FLIGHT = 2
    entered, release = held_timeline

    def burst(index: int) -> int:
        return Client().get("/api/comments/").status_code

    result: list[list[int]] = []
    runner = threading.Thread(target=lambda: result.append(in_threads(burst, 8)), daemon=True)
    runner.start()
    wait_for(lambda: len(entered) == 2 and shedding.in_flight.waiting == 6, what="2 requests in, 6 waiting")
    release.set()
    runner.join(WAIT_SECONDS)
    assert result == [[200] * 8]


def test_once_the_queue_stood_past_the_interval_newcomers_are_refused_after_the_target(slots, held_timeline):
    """The CoDel-like switch: a newcomer while the queue is young waits (a burst); one once
    requests have been waiting for longer than WEB_QUEUE_INTERVAL waits only
    WEB_QUEUE_TARGET (0 here: refused at once); the refusals keep newcomers on the short
    wait for an interval, after which they may wait again."""
    slots.WEB_QUEUE_INTERVAL = 0.1
    entered, release = held_timeline
    answers: list = []
    with clock_override(ManualClock()) as manual:
        first = get_in_thread("/api/comments/", answers)
        wait_for(lambda: len(entered) == 1, what="the first request inside")
        burst = get_in_thread("/api/comments/", answers)
        wait_for(lambda: shedding.in_flight.waiting == 1, what="a newcomer of the burst waiting")
        manual.advance(0.5)  # the queue has stood longer than the interval
        refused = Client().get("/api/comments/")
        page = Client().get("/popular/")
        assert shedding.in_flight.waiting == 1
        release.set()
        first.join(WAIT_SECONDS)
        burst.join(WAIT_SECONDS)
        budget = shedding.in_flight.budget
        assert budget(now=manual.monotonic(), timeout=5, interval=0.1, target=0.02) == 0.02  # refused just now
        manual.advance(0.5)
        assert budget(now=manual.monotonic(), timeout=5, interval=0.1, target=0.02) == 5
    assert [answer.status_code for answer in answers] == [200, 200]
    assert refused.status_code == 503
    assert refused["Retry-After"] == str(shedding.RETRY_AFTER_SECONDS)
    assert refused.json() == {"detail": "The server is busy, retry shortly.", "code": "overloaded"}
    assert page.status_code == 503 and "busy" in page.content.decode()


def test_a_wait_that_ran_out_keeps_newcomers_on_the_short_wait(slots, held_timeline):
    entered, release = held_timeline
    answers: list = []
    with clock_override(ManualClock()):
        first = get_in_thread("/api/comments/", answers)
        wait_for(lambda: len(entered) == 1, what="the first request inside")
        slots.WEB_QUEUE_TIMEOUT = 0.05  # nothing frees the slot meanwhile: its wait runs out
        ran_out = Client().get("/api/comments/")
        slots.WEB_QUEUE_TIMEOUT = WAIT_SECONDS
        refused = Client().get("/api/comments/")  # the queue is empty, but a refusal was just now
        release.set()
        first.join(WAIT_SECONDS)
    assert ran_out.status_code == refused.status_code == 503
    assert answers[0].status_code == 200


def test_a_wait_past_its_budget_is_refused_and_leaves_the_queue(slots, held_timeline):
    slots.WEB_QUEUE_TIMEOUT = 0.05  # nothing frees the slot meanwhile: the outcome does not depend on speed
    entered, release = held_timeline
    answers: list = []
    first = get_in_thread("/api/comments/", answers)
    wait_for(lambda: len(entered) == 1, what="the first request inside")
    assert Client().get("/api/comments/").status_code == 503
    assert shedding.in_flight.waiting == 0 and shedding.in_flight.count == 1
    release.set()
    first.join(WAIT_SECONDS)
    assert answers[0].status_code == 200


# --- the body before the slot -----------------------------------------------------------------


class Connection:
    """A request arriving on a real socket, as gunicorn hands it over: `gunicorn.socket` and a
    `wsgi.input` reading from it; `reading` is set once the application asks for the body."""

    def __init__(self, *, length: int, path: str = "/api/comments/", address: str = "192.0.2.1") -> None:
        self.client, self.server = socket.socketpair()
        self.reading = threading.Event()
        stream = self.server.makefile("rb")
        connection = self

        class Input:
            def read(self, size: int = -1) -> bytes:
                connection.reading.set()
                return stream.read(size)

            def readline(self, size: int = -1) -> bytes:
                connection.reading.set()
                return stream.readline(size)

        self.environ = {
            "REQUEST_METHOD": "POST",
            "PATH_INFO": path,
            "SERVER_NAME": "testserver",
            "SERVER_PORT": "80",
            "CONTENT_TYPE": "application/json",
            "CONTENT_LENGTH": str(length),
            "wsgi.input": Input(),
            "wsgi.url_scheme": "http",
            "gunicorn.socket": self.server,
            "REMOTE_ADDR": address,
        }

    def close(self) -> None:
        self.client.close()
        self.server.close()


def served(environ: dict, answers: list, seen: list) -> threading.Thread:
    """The shedding middleware on `environ` in a thread; the body the application got goes to `seen`."""

    def application(request):
        seen.append(request.body)
        return HttpResponse("ok")

    middleware = shedding.LoadSheddingMiddleware(application)
    thread = threading.Thread(target=lambda: answers.append(middleware(WSGIRequest(environ))), daemon=True)
    thread.start()
    return thread


def test_a_body_not_in_by_the_deadline_is_a_408_and_never_reaches_the_application(settings):
    settings.WEB_BODY_TIMEOUT = 0.2  # the client never sends the rest: only the wait's length depends on it
    connection = Connection(length=100)
    answers: list = []
    seen: list = []
    try:
        connection.client.sendall(b'{"body": "')
        served(connection.environ, answers, seen).join(WAIT_SECONDS)
    finally:
        connection.close()
    assert seen == []
    assert answers[0].status_code == 408
    assert json.loads(answers[0].content)["code"] == "body_timeout"


def test_a_body_that_arrives_in_pieces_in_time_reaches_the_application_whole(settings):
    settings.WEB_BODY_TIMEOUT = WAIT_SECONDS
    body = b'{"body": "' + b"x" * 5000 + b'"}'
    connection = Connection(length=len(body))
    answers: list = []
    seen: list = []
    try:
        connection.client.sendall(body[:10])
        thread = served(connection.environ, answers, seen)
        assert connection.reading.wait(WAIT_SECONDS)
        connection.client.sendall(body[10:])
        thread.join(WAIT_SECONDS)
    finally:
        connection.close()
    assert seen == [body]
    assert answers[0].status_code == 200


def test_a_body_cut_short_by_the_client_is_a_400(settings):
    settings.WEB_BODY_TIMEOUT = WAIT_SECONDS
    connection = Connection(length=100, path="/popular/")
    answers: list = []
    seen: list = []
    try:
        connection.client.sendall(b"body=short")
        connection.client.shutdown(socket.SHUT_WR)
        served(connection.environ, answers, seen).join(WAIT_SECONDS)
    finally:
        connection.close()
    assert seen == []
    assert answers[0].status_code == 400 and b"ended before" in answers[0].content


def test_a_slow_body_holds_no_slot(slots, settings):
    """One slot, no waiting: a client still sending its body does not stop a visitor."""
    slots.WEB_QUEUE_TIMEOUT = 0.0
    connection = Connection(length=100)
    answers: list = []
    seen: list = []
    try:
        connection.client.sendall(b'{"body": "')
        thread = served(connection.environ, answers, seen)
        assert connection.reading.wait(WAIT_SECONDS)
        visitor = Client().get("/api/comments/")
        connection.client.sendall(b"x" * 88 + b'"}')
        thread.join(WAIT_SECONDS)
    finally:
        connection.close()
    assert visitor.status_code == 200
    assert answers[0].status_code == 200 and len(seen[0]) == 100


def test_one_address_reads_only_its_share_of_bodies_at_once(settings):
    """Two bodies from one address still arriving: a third from it is a 429 at once, its
    connection's reading side shut (never read to the end in a thread); another address,
    and the same one once a read ended, are read as usual."""
    settings.WEB_BODY_TIMEOUT = WAIT_SECONDS
    settings.WEB_BODY_READS_PER_ADDRESS = 2
    slow = [Connection(length=100) for _ in range(2)]
    third = Connection(length=100)
    other = Connection(length=2, address="198.51.100.7")
    answers: list = []
    seen: list = []
    try:
        threads = []
        for connection in slow:
            connection.client.sendall(b'{"body": "')
            threads.append(served(connection.environ, answers, seen))
            assert connection.reading.wait(WAIT_SECONDS)
        refused: list = []
        third.client.sendall(b'{"body": "')
        served(third.environ, refused, seen).join(WAIT_SECONDS)
        third.server.settimeout(WAIT_SECONDS)
        while third.server.recv(100):  # what had come; then the end (shut): nothing more is read
            pass
        other.client.sendall(b"{}")
        served(other.environ, answers, seen).join(WAIT_SECONDS)
        assert seen == [b"{}"]
        slow[0].client.sendall(b"x" * 88 + b'"}')
        threads[0].join(WAIT_SECONDS)
        again = Connection(length=2)
        try:
            again.client.sendall(b"{}")
            served(again.environ, answers, seen).join(WAIT_SECONDS)
        finally:
            again.close()
        slow[1].client.shutdown(socket.SHUT_WR)
        threads[1].join(WAIT_SECONDS)
    finally:
        for connection in (*slow, third, other):
            connection.close()
    assert refused[0].status_code == 429 and refused[0]["Retry-After"] == "2"
    assert json.loads(refused[0].content)["code"] == "too_many_bodies"
    assert seen[:2] == [b"{}", b'{"body": "' + b"x" * 88 + b'"}'] and seen[2] == b"{}"
    assert [answer.status_code for answer in answers] == [200, 200, 200, 400]


def test_work_after_the_answer_keeps_the_slot_and_logs_under_the_request_s_id(slots, settings, make_user, monkeypatch):
    """A like's fold runs once its answer is sent (project/serving/after_response.py): its request
    keeps its slot until the fold is done, and the fold's log lines carry the request's id."""
    from actions.comments import comment_create
    from notifications.like_fold import batches as fold_batches
    from project.operations import logs

    settings.LIKE_FOLD_AFTER_RESPONSE = True
    author, liker = make_user("author"), make_user("liker")
    comment = comment_create(author_id=str(author.pk), body="like me")
    seen = []
    real_fold_batch = fold_batches.fold_batch

    def fold_batch(**kwargs):
        seen.append((shedding.in_flight.count, logs._request_id.get()))
        return real_fold_batch(**kwargs)

    monkeypatch.setattr(fold_batches, "fold_batch", fold_batch)
    client = Client()
    client.force_login(liker)
    answer = client.put(f"/api/comments/{comment.comment_id}/like/")
    assert answer.status_code in (200, 201)
    assert seen == [(1, answer["X-Request-ID"])]  # folded inside the request's slot, under its id
    assert shedding.in_flight.count == 0  # and the slot given back after
