"""`manage.py mail_notifications`: one pass without --loop, its summary, its exit status, its help."""

from __future__ import annotations

import pytest
from django.core import mail
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.notifications.mail_helpers import email_on, reply_to, schedule, verified

pytestmark = pytest.mark.django_db


def test_one_pass_sends_what_is_due_and_says_so(make_user, capsys):
    alice, bob = verified(make_user("alice")), make_user("bob")
    email_on(alice, "reply")
    reply_to(alice, bob)
    schedule(alice)

    call_command("mail_notifications", "--no-digests")

    assert len(mail.outbox) == 1
    assert "notification mail: 1 sent, 0 failed, 0 skipped" in capsys.readouterr().out


def test_a_failed_mail_makes_the_run_exit_1(make_user, monkeypatch):
    alice, bob = verified(make_user("alice")), make_user("bob")
    email_on(alice, "reply")
    reply_to(alice, bob)
    schedule(alice)

    def refuse(self, *args, **kwargs):
        raise OSError("connection refused")

    monkeypatch.setattr("django.core.mail.EmailMessage.send", refuse)
    with pytest.raises(CommandError, match="1 mail"):
        call_command("mail_notifications", "--no-digests")


def test_the_help_says_what_it_promises(capsys):
    with pytest.raises(SystemExit):
        call_command("mail_notifications", "--help")
    text = " ".join(capsys.readouterr().out.split())
    assert "at most once" in text and "SIGTERM" in text and "--loop" in text and "--no-digests" in text


def test_a_bad_limit_is_refused():
    with pytest.raises(CommandError, match="--limit"):
        call_command("mail_notifications", "--limit", "0")
