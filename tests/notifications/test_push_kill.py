"""kill -9 of the push sender: no browser gets a push twice, every push marked sent arrived, and
the rest have a ledger line `unknown` (the sender died between claiming a push and marking it).

The sender runs as a process of its own against the local push-service stand-in (which counts
what each endpoint took); a first run, sending 3 at once, stalls right after its 4th push was
taken (tests/notifications/sender_stalling.py; its other threads stall too as theirs are taken)
and is killed with SIGKILL there. A thread that had claimed a push and not yet posted it leaves
an `unknown` line whose push never arrives: when the sender cannot know, never twice outranks
at least once. A second, normal run (`manage.py send_push --loop`, its default threads)
finishes the queue. No sleeps: the test waits on what it can observe (a marker file, the queue).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings

from notifications.mail.queue import PUSH
from notifications.mail.selectors import SENT, UNKNOWN, ledger_get, ledger_outcome
from notifications.models import MailQueue
from project.testing.harness import kill_when_held, wait_for
from tests.notifications.mail_helpers import reply_to
from tests.notifications.push_helpers import push_on, subscribed, uid

ROOT = Path(__file__).resolve().parents[2]
RECIPIENTS = 12
STALL_AFTER = 4
THREADS = 3  # the first sender's: pushes sent at once

pytestmark = pytest.mark.django_db(transaction=True)  # the sender's process reads the accounts


def _env(worker_environment, **extra: str) -> dict[str, str]:
    return worker_environment(
        drop=("VAPID",),
        VAPID_PRIVATE_KEY=settings.VAPID_PRIVATE_KEY,
        VAPID_SUBJECT=settings.VAPID_SUBJECT,
        LOCAL_PLAIN_HTTP="True",
        PUSH_SERVICE_HOSTS="127.0.0.1",
        MAIL_LEASE_SECONDS="1",  # the killed sender's claims run out at once
        **extra,
    )


def _queued() -> int:
    return sum(1 for item in MailQueue.scan(consistent_read=True) if item.channel == PUSH)


def test_a_push_sender_killed_mid_way_and_restarted_pushes_nothing_twice(
    worker_environment, make_user, push_service, tmp_path
):
    bob = make_user("bob")
    people = [make_user(f"reader{n}") for n in range(RECIPIENTS)]
    browsers = {}
    for person in people:
        push_on(person, "reply")
        browsers[uid(person)] = subscribed(person, push_service)
        reply_to(person, bob)
    sources = {item.user_id: item.source for item in MailQueue.scan(consistent_read=True) if item.channel == PUSH}
    assert len(sources) == RECIPIENTS

    stalled = tmp_path / "stalled"
    first_log = tmp_path / "first.log"
    first = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "notifications" / "sender_stalling.py"), "push"],
        cwd=ROOT,
        env=_env(worker_environment, STALL_AFTER=str(STALL_AFTER), STALLED_MARKER=str(stalled), THREADS=str(THREADS)),
        stdout=subprocess.DEVNULL,
        stderr=first_log.open("w"),
    )
    kill_when_held(first, stalled, log=first_log, what="the first sender stalling", seconds=120)
    # The other threads' pushes under way may still have been taken before the kill.
    assert STALL_AFTER <= sum(push_service.counts().values()) < STALL_AFTER + THREADS

    second_log = tmp_path / "second.log"
    second = subprocess.Popen(
        [sys.executable, "manage.py", "send_push", "--loop", "--poll-seconds", "0.2"],
        cwd=ROOT,
        env=_env(worker_environment),
        stdout=subprocess.DEVNULL,
        stderr=second_log.open("w"),
    )
    try:
        wait_for(lambda: _queued() == 0, what="the push queue emptied", seconds=120)
        second.send_signal(signal.SIGTERM)
        assert second.wait(timeout=60) == 0, second_log.read_text()[-3000:]
    finally:
        if second.poll() is None:
            second.kill()
            second.wait()
    assert "send_push: stopped" in second_log.read_text()

    assert push_service.refused == []
    counts = push_service.counts()
    assert max(counts.values()) == 1, counts  # no browser twice
    outcomes = {
        person.username: ledger_outcome(ledger_get(user_id=uid(person), channel=PUSH, source=sources[uid(person)]))
        for person in people
    }
    took = {person.username: counts[browsers[uid(person)].token] for person in people}
    unknown = {name for name, outcome in outcomes.items() if outcome == UNKNOWN}
    # The killed sender's threads each held at most one claim it had not marked: the stalled
    # one (its push was taken), and perhaps others killed before or after their own POST.
    assert 1 <= len(unknown) <= THREADS, outcomes
    assert any(took[name] == 1 for name in unknown), (outcomes, took)  # the stalled one arrived
    for name, outcome in outcomes.items():
        assert outcome in (SENT, UNKNOWN), outcomes
        if outcome == SENT:
            assert took[name] == 1, (outcomes, took)  # every push marked sent arrived, once
    # An `unknown` line is never sent again: at most once when the sender cannot know.
