"""`manage.py mail_notifications --loop` whose mail backend stalls for good right after handing
over its STALL_AFTER-th mail, before the sender can mark it sent: the instant a SIGKILL
hurts most. Run as a script by tests/notifications/test_mail_kill.py (never imported)."""

import os
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.core.mail.backends.filebased import EmailBackend  # noqa: E402
from django.core.management import call_command  # noqa: E402

stall_after = int(os.environ["STALL_AFTER"])
stalled_marker = Path(os.environ["STALLED_MARKER"])
sent = 0
real_send = EmailBackend.send_messages


def send_then_stall(self, messages):
    global sent
    count = real_send(self, messages)
    sent += len(messages)
    if sent >= stall_after:
        stalled_marker.write_text(str(sent))
        threading.Event().wait()  # never set: the test kills the process here
    return count


EmailBackend.send_messages = send_then_stall  # type: ignore[method-assign]
call_command("mail_notifications", "--loop", "--poll-seconds", "0.2", "--no-digests")
