"""Erase the accounts whose owners deleted them (social/account/services.py)."""

import logging

from project.operations.backlog import Backlog
from project.operations.worker_loop import WorkerCommand
from social.account import services


class Command(WorkerCommand):
    help = (
        "Erase deleted accounts: for each deletion request older than ACCOUNT_DELETION_DELAY_SECONDS, "
        "run every app's eraser steps (likes undone, comments emptied, notifications, feed, activity, "
        "preferences, delivery targets, blocks, reports, limits) and delete the user row. Exactly once and "
        "resumable: a request is claimed with a lease, progress is stored after each unit, and a killed run "
        "is resumed where it stopped. Without --loop: every due request, then exit. With --loop: keep "
        "polling until SIGTERM/SIGINT, which finishes the current unit."
    )
    worker = "erase_accounts"
    logger = logging.getLogger("social.account.services")
    finishing = "the current unit of the current account"
    poll_seconds = 10.0
    poll_help = "seconds between polls when no deletion is due"
    loop_help = "keep running and erase deleted accounts as they come due"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.erased = 0

    def backlog(self) -> Backlog:
        return Backlog(label="account deletions", count=services.account_deletions_pending())

    def loop_pass(self) -> bool:
        finished = services.account_deletions_run(should_stop=self.should_stop)
        self.erased += finished
        return bool(finished) and not self.should_stop()

    def run_once(self) -> None:
        while self.loop_pass():
            pass

    def stopped_details(self) -> str:
        return f" after erasing {self.erased} account(s)"

    def finish(self) -> None:
        self.report(f"erased {self.erased} account(s)")
