"""`python manage.py clear_sessions [--loop] [--poll-seconds S]`: delete expired sessions."""

from __future__ import annotations

import logging

from django.core.management import call_command
from django.db import DatabaseError

from project.operations.worker_loop import WorkerCommand

DAY_SECONDS = 86400.0


class Command(WorkerCommand):
    help = (
        "Delete the expired sessions (Django's clearsessions: one DELETE of the rows whose expiry has "
        "passed). --loop: at start, then once a day, until SIGTERM. Safe on several machines at once: "
        "each deletes what is expired and none is there yet, which changes nothing."
    )
    worker = "clear_sessions"
    logger = logging.getLogger("project.sessions")
    finishing = "the current clean-up"
    poll_seconds = DAY_SECONDS
    poll_help = "seconds between clean-ups"
    loop_help = "clean up at start and then every --poll-seconds, until SIGTERM or Ctrl-C"
    # A pass a day: a heartbeat would go stale between passes, and a missed day costs only rows.
    beats = False
    cleanups = 0

    def keep_going_on(self, error: Exception) -> bool:
        return isinstance(error, DatabaseError)  # the database unreachable or locked: try again later

    def loop_pass(self) -> bool:
        call_command("clearsessions")
        self.cleanups += 1
        self.logger.info("%s: expired sessions deleted", self.worker)
        return False

    def stopped_details(self) -> str:
        return f" after {self.cleanups} clean-up(s)"
