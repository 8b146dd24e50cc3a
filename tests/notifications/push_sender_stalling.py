"""`manage.py send_push --loop` that stalls for good right after a push service took its
STALL_AFTER-th push, before the sender can mark it sent: the instant a SIGKILL hurts most.
Run as a script by tests/notifications/test_push_kill.py (never imported)."""

import os
import sys
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

from notifications.push import sender  # noqa: E402

stall_after = int(os.environ["STALL_AFTER"])
stalled_marker = Path(os.environ["STALLED_MARKER"])
taken = 0
real_used = sender.subscription_used


def used_then_stall(subscription):
    global taken
    real_used(subscription)
    taken += 1
    if taken >= stall_after:
        stalled_marker.write_text(str(taken))
        threading.Event().wait()  # never set: the test kills the process here


sender.subscription_used = used_then_stall
call_command("send_push", "--loop", "--poll-seconds", "0.2")
