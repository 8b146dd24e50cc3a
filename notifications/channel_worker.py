"""What the channel senders share: `mail_notifications` and `send_push` take the due items of
their channel from the one queue (notifications/mail/queue.py), hand each to their channel's
`process` (the outcome: sent, failed, skipped, already, postponed or taken), count the
outcomes, and end a run without --loop with its summary and exit status 1 if one failed.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from notifications.mail import selectors as mail_selectors
from notifications.mail import services as mail_services
from notifications.mail.queue import EMAIL
from notifications.models import MailQueue
from project.operations.worker_loop import WorkerCommand


class ChannelWorkerCommand(WorkerCommand):
    """A sender of one channel. A subclass says its `channel`, what one item is called in log
    lines (`unit`: "mail"), the run's summary label and the failure message, and how one due
    item is handled (`process`); `pass_open` holds what a pass shares (an SMTP connection),
    `pass_more` what comes after the due items (the digests), `processed` how the items are
    worked through (in order by default)."""

    channel = EMAIL
    unit = ""  # "mail": "mail <source> to user <id>: <outcome>"
    summary_label = ""  # "notification mail": "notification mail: 3 sent, 1 skipped"
    failed_message = ""  # "{failed} mail(s) failed; ..."

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.totals = mail_services.MailStats()

    # --- what a subclass says ------------------------------------------------

    def process(self, item: MailQueue) -> str:
        """Handle one due item; its outcome."""
        raise NotImplementedError

    @contextlib.contextmanager
    def pass_open(self) -> Iterator[None]:
        """What one pass holds open while it works (default: nothing)."""
        yield

    def pass_more(self) -> None:
        """More work of a pass, after its due items (default: none)."""

    def processed(self, due: list[MailQueue]) -> Iterator[tuple[MailQueue, str]]:
        """Each item of `due` with its outcome, one after the other until a signal came."""
        for item in due:
            if self.should_stop():
                return
            yield item, self.process(item)

    # --- the pass ----------------------------------------------------------------

    def loop_pass(self) -> bool:
        limit = int(self.options["limit"])
        due = mail_selectors.mail_queue_due(limit=limit, channel=self.channel)
        with self.pass_open():
            for item, outcome in self.processed(due):
                self.totals.count(outcome)
                if self.verbosity >= 2 or outcome == mail_selectors.FAILED:
                    self.logger.info("%s %s to user %s: %s", self.unit, item.source, item.user_id, outcome)
            if self.should_stop():
                return False
            self.pass_more()
        if due and self.looping:
            self.logger.info("%s: %s", self.worker, self.totals.summary)
        return len(due) >= limit

    def stopped_details(self) -> str:
        return f" after {self.totals.summary}"

    def finish(self) -> None:
        self.report(f"{self.summary_label}: {self.totals.summary}")
        failed = self.totals.get(mail_selectors.FAILED)
        self.exit_failed(failed, self.failed_message.format(failed=failed))
