"""kill -9 of the eraser half way through a deleted account's likes: a second run finishes,
every like is undone exactly once (counts exact, each author's notification loses the liker
once), and the account is gone.

The first eraser runs as a process of its own (tests/social/held_eraser.py) and holds after its
30th like undone, in the middle of its second page (the first page's progress stored, the
second's not); the test kills it with SIGKILL there, lets its lease lapse (as the lease's
seconds would) and runs `manage.py erase_accounts` again. No sleeps: the test waits on the
marker file.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model

from actions.likes import like_add
from notifications.selectors import notification_inbox, unread_count
from project.testing.harness import kill_when_held
from social.account.services import account_delete_request
from social.counters import LIKES, counter_key, counter_value
from social.models import AccountDeletion, Like
from tests.notifications.helpers import fold, post, uid

ROOT = Path(__file__).resolve().parents[2]
COMMENTS = 40
HOLD_AFTER = 30

pytestmark = pytest.mark.django_db(transaction=True)  # the eraser's processes read the request


def _env(worker_environment, **extra: str) -> dict[str, str]:
    return worker_environment(ACCOUNT_DELETION_DELAY_SECONDS="0", **extra)


def test_an_eraser_killed_mid_way_and_run_again_undoes_every_like_once(worker_environment, make_user, tmp_path):
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    comments = [post(bob, f"Bob {n}") for n in range(COMMENTS)]
    for comment_id in comments:
        like_add(comment_id=comment_id, user_id=uid(alice))
        like_add(comment_id=comment_id, user_id=uid(carol))
    fold()
    assert unread_count(user_id=uid(bob)) == COMMENTS  # the badge counts notifications: one per liked comment
    account_delete_request(user=alice, password="pw-Secret-123", address="192.0.2.1")

    held = tmp_path / "held"
    log = tmp_path / "first.log"
    first = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "social" / "held_eraser.py")],
        cwd=ROOT,
        env=_env(worker_environment, HELD_MARKER=str(held), HOLD_AFTER=str(HOLD_AFTER)),
        stdout=subprocess.DEVNULL,
        stderr=log.open("w"),
    )
    kill_when_held(first, held, log=log, what="the eraser holding")
    deletion = AccountDeletion.objects.get(user_id=alice.pk)
    assert deletion.step == "likes" and deletion.cursor and deletion.finished_at is None  # one page stored
    left = len(list(Like.by_user.query(uid(alice))))
    assert left == COMMENTS - HOLD_AFTER  # half way: 30 undone, 10 to go

    AccountDeletion.objects.filter(pk=deletion.pk).update(lease_until=None)  # its lease lapsed
    second = subprocess.run(
        [sys.executable, "manage.py", "erase_accounts"],
        cwd=ROOT,
        env=_env(worker_environment),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert second.returncode == 0, second.stderr[-3000:]
    assert "erased 1 account(s)" in second.stdout

    fold()
    for comment_id in comments:
        assert counter_value(key=counter_key(kind=LIKES, object_id=comment_id)) == 1  # Carol's, once each
    inbox = notification_inbox(user_id=uid(bob), cursor=None, limit=100)
    likes = [item for item in inbox.results if item.kind == "like" and item.unread]
    assert len(likes) == COMMENTS
    assert {item.text for item in likes} == {"Carol liked your comment"}
    assert unread_count(user_id=uid(bob)) == COMMENTS  # Alice's 40 likes left the badge, once each
    assert not get_user_model().objects.filter(pk=alice.pk).exists()
    assert AccountDeletion.objects.get(pk=deletion.pk).finished_at is not None
