"""`clear_sessions`: expired sessions are deleted and live ones kept, once or in its daily loop,
and two machines cleaning up at the same moment both succeed."""

import threading
from datetime import timedelta

import pytest
from django.contrib.sessions.backends.db import SessionStore
from django.contrib.sessions.models import Session
from django.core.management import call_command
from django.db import OperationalError, connections
from django.utils import timezone

from project.models import WorkerHeartbeat
from project.testing.harness import in_threads, wait_for

pytestmark = pytest.mark.django_db(transaction=True)  # the loop and the racers run in threads


def live_session() -> str:
    session = SessionStore()
    session["_auth_user_id"] = "7"
    session.create()  # expires SESSION_COOKIE_AGE from now
    assert session.session_key
    return session.session_key


def expired_session(days_ago: float = 1) -> str:
    session = SessionStore()
    session["_auth_user_id"] = "8"
    session.create()
    assert session.session_key
    Session.objects.filter(session_key=session.session_key).update(expire_date=timezone.now() - timedelta(days_ago))
    return session.session_key


def exists(key: str) -> bool:
    return Session.objects.filter(session_key=key).exists()


def in_a_thread(command, stop: threading.Event) -> threading.Thread:
    """`command`'s --loop in a thread of its own (with its own database connection, closed at the end)."""

    def run():
        try:
            command.run_loop(stop=stop, poll_seconds=0.05)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


def test_an_expired_session_is_deleted_and_a_live_one_kept():
    live, expired, long_expired = live_session(), expired_session(), expired_session(days_ago=400)
    call_command("clear_sessions", verbosity=0)
    assert not exists(expired) and not exists(long_expired)
    assert exists(live)
    assert SessionStore(session_key=live).load() == {"_auth_user_id": "7"}  # still logs its person in


def test_the_loop_cleans_up_at_start_then_every_interval_and_stops_on_its_event():
    from project.management.commands.clear_sessions import Command

    first, live = expired_session(), live_session()
    stop = threading.Event()
    command = Command()
    loop = in_a_thread(command, stop)
    try:
        wait_for(lambda: not exists(first), what="the clean-up at start")
        second = expired_session()  # expires after the first pass: the next one deletes it
        wait_for(lambda: not exists(second), what="the next clean-up")
        assert exists(live)
    finally:
        stop.set()
        loop.join(60)
    assert not loop.is_alive()
    assert command.cleanups >= 2
    assert list(WorkerHeartbeat.query("clear_sessions")) == []  # a daily job writes no heartbeat


def test_a_failing_database_is_tried_again_instead_of_ending_the_loop(monkeypatch):
    """The database away for a moment (a restart, a fail-over): the pass fails, the loop waits
    and tries again rather than exiting and leaving the clean-up to its supervisor."""
    from project.management.commands import clear_sessions

    expired = expired_session()
    calls = []
    real = clear_sessions.call_command

    def flaky(name, *args, **kwargs):
        calls.append(name)
        if len(calls) == 1:
            raise OperationalError("the database is restarting")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(clear_sessions, "call_command", flaky)
    monkeypatch.setattr("project.operations.worker_loop.OUTAGE_BACKOFF_MAX", 0.1)
    stop = threading.Event()
    loop = in_a_thread(clear_sessions.Command(), stop)
    try:
        wait_for(lambda: not exists(expired), what="the clean-up after the failure")
    finally:
        stop.set()
        loop.join(60)
    assert len(calls) >= 2


def test_clean_ups_at_once_all_succeed_and_a_live_session_survives():
    """Every machine runs the clean-up: they may start in the same second. Each deletes what is
    expired and no other deleted first; none fails, and a live session survives them all."""
    from project.management.commands.clear_sessions import Command

    expired = [expired_session() for _ in range(20)]
    live = live_session()

    def clean_up(_):
        try:
            return Command().loop_pass()  # one pass, as each machine's loop runs it
        finally:
            connections.close_all()

    assert in_threads(clean_up, 4) == [False] * 4
    assert not any(exists(key) for key in expired)
    assert exists(live)
