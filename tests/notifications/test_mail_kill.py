"""kill -9 of the mail sender: no mail goes twice, and every recipient is mailed or has a ledger
line `unknown` (the sender died between handing the mail over and marking it sent).

The sender runs as a process of its own with Django's file-based e-mail backend; a first run
stalls right after handing over its 4th mail (tests/notifications/sender_stalling.py) and
is killed with SIGKILL there; a second, normal run (`manage.py mail_notifications --loop`)
finishes the queue. The mails are counted in the files. No sleeps: the test waits on what it
can observe (a marker file, the queue).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from notifications.mail.selectors import EMAIL, SENT, UNKNOWN, ledger_get, ledger_outcome
from notifications.models import MailQueue
from project.testing.harness import kill_when_held, wait_for
from tests.notifications.mail_helpers import email_on, reply_to, schedule, uid, verified

ROOT = Path(__file__).resolve().parents[2]
RECIPIENTS = 12
STALL_AFTER = 4

pytestmark = pytest.mark.django_db(transaction=True)  # the sender's process reads the accounts


def _env(worker_environment, mail_dir: Path, **extra: str) -> dict[str, str]:
    return worker_environment(
        EMAIL_URL=f"filemail:///{mail_dir}",  # django-environ drops one slash: this is absolute
        MAIL_LEASE_SECONDS="1",  # the killed sender's claims run out at once
        **extra,
    )


def _mails_by_recipient(mail_dir: Path) -> Counter[str]:
    """Recipients of every mail the file backend wrote (one file per connection, mails appended)."""
    counts: Counter[str] = Counter()
    for path in mail_dir.iterdir():
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.startswith("To: "):
                counts[line.removeprefix("To: ").strip()] += 1
    return counts


def test_a_sender_killed_mid_way_and_restarted_sends_no_mail_twice(worker_environment, make_user, tmp_path):
    mail_dir = tmp_path / "mail"
    mail_dir.mkdir()
    bob = make_user("bob")
    people = [verified(make_user(f"reader{n}")) for n in range(RECIPIENTS)]
    sources = {}
    for person in people:
        email_on(person, "reply")
        reply_to(person, bob)
        sources[uid(person)] = schedule(person)

    stalled = tmp_path / "stalled"
    log = (tmp_path / "first.log").open("w")
    first = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "notifications" / "sender_stalling.py"), "mail"],
        cwd=ROOT,
        env=_env(worker_environment, mail_dir, STALL_AFTER=str(STALL_AFTER), STALLED_MARKER=str(stalled)),
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    kill_when_held(first, stalled, log=tmp_path / "first.log", what="the first sender stalling", seconds=120)
    assert sum(_mails_by_recipient(mail_dir).values()) == STALL_AFTER

    second_log = tmp_path / "second.log"
    second = subprocess.Popen(
        [sys.executable, "manage.py", "mail_notifications", "--loop", "--poll-seconds", "0.2", "--no-digests"],
        cwd=ROOT,
        env=_env(worker_environment, mail_dir),
        stdout=subprocess.DEVNULL,
        stderr=second_log.open("w"),
    )
    try:
        wait_for(lambda: MailQueue.count(consistent_read=True) == 0, what="the queue emptied", seconds=120)
        second.send_signal(signal.SIGTERM)
        assert second.wait(timeout=60) == 0, second_log.read_text()[-3000:]
    finally:
        if second.poll() is None:
            second.kill()
            second.wait()
    assert "mail_notifications: stopped" in second_log.read_text()

    mailed = _mails_by_recipient(mail_dir)
    assert max(mailed.values()) == 1, mailed  # nobody twice
    outcomes = {
        person.username: ledger_outcome(ledger_get(user_id=uid(person), channel=EMAIL, source=sources[uid(person)]))
        for person in people
    }
    unknown = {name for name, outcome in outcomes.items() if outcome == UNKNOWN}
    assert len(unknown) == 1, outcomes  # the mail the killed sender had handed over and not marked
    for person in people:
        address = f"{person.username}@example.com"
        assert mailed[address] == 1 or person.username in unknown, (person.username, outcomes[person.username])
        assert outcomes[person.username] in (SENT, UNKNOWN)
    assert sum(mailed.values()) == RECIPIENTS  # the unknown one did go (the file says so), once
