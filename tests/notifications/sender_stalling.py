"""A channel sender (`manage.py mail_notifications --loop` or `send_push --loop`, by the first
argument: `mail` or `push`) that stalls for good right after its STALL_AFTER-th mail was handed
over or push was taken by the push service, before the sender can mark it sent: the instant a
SIGKILL hurts most. Run as a script by tests/notifications/test_mail_kill.py and
test_push_kill.py (never imported)."""

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

from notifications.push import sender  # noqa: E402

channel = sys.argv[1]
stall_after = int(os.environ["STALL_AFTER"])
stalled_marker = Path(os.environ["STALLED_MARKER"])
done = 0


counting = threading.Lock()  # the push sender's threads count together


def then_stall(real, units):
    """`real`, then count `units(args)` handed over, and stall once STALL_AFTER are (every
    thread that hands one over after that stalls too)."""

    def wrapped(*args):
        global done
        result = real(*args)
        with counting:
            done += units(*args)
            stall = done >= stall_after
        if stall:
            stalled_marker.write_text(str(done))
            threading.Event().wait()  # never set: the test kills the process here
        return result

    return wrapped


if channel == "mail":
    EmailBackend.send_messages = then_stall(EmailBackend.send_messages, lambda _, messages: len(messages))  # type: ignore[method-assign]
    call_command("mail_notifications", "--loop", "--poll-seconds", "0.2", "--no-digests")
else:
    sender.subscription_used = then_stall(sender.subscription_used, lambda _: 1)
    call_command("send_push", "--loop", "--poll-seconds", "0.2", "--threads", os.environ.get("THREADS", "1"))
