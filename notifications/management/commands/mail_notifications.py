"""Send the notification e-mail that is due, and the digests (docs/explanation/email.md)."""

import logging

from django.core.mail import get_connection

from notifications.mail import digest as mail_digest
from notifications.mail import selectors as mail_selectors
from notifications.mail import services as mail_services
from project.operations.worker_loop import WorkerCommand


class Command(WorkerCommand):
    help = (
        "Send the notification e-mail that is due (replies, mentions, watched threads, likes and "
        "staff messages that people chose to get by e-mail and had not read NOTIFY_EMAIL_DELAY "
        "seconds later) and the daily and weekly digests. Each mail is checked again just before "
        "it goes (still unread, e-mail still on, thread not muted, address verified, limits) and "
        "goes at most once, also with several of these running on several machines; the `sends` "
        "ledger records every outcome. Without --loop: one pass, then exit (exit code 1 if a mail "
        "failed). With --loop: keep polling until SIGTERM/SIGINT, which finishes the current mail."
    )
    worker = "mail_notifications"
    logger = logging.getLogger("notifications.mail.services")
    finishing = "the current mail"
    poll_seconds = 5.0
    poll_help = "seconds between polls when no mail is due"
    loop_help = "keep running and poll for due mail and digests"
    limit_help = "due mails taken per shard and pass"

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--no-digests", action="store_true", help="send notification mails only, no digests")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.totals = mail_services.MailStats()

    def backlog(self):
        return mail_selectors.mail_queue_backlog()

    def loop_pass(self) -> bool:
        limit = self.options["limit"]
        due = mail_selectors.mail_queue_due(limit=limit)
        # One connection for the pass (one SMTP session for many mails), opened at the first mail.
        with get_connection() as connection:
            for item in due:
                if self.should_stop():
                    return False
                outcome = mail_services.mail_process(item=item, connection=connection)
                self.totals.count(outcome)
                if self.verbosity >= 2 or outcome == mail_selectors.FAILED:
                    self.logger.info("mail %s to user %s: %s", item.source, item.user_id, outcome)
            if not self.options["no_digests"]:
                mail_digest.digests_send(
                    should_stop=self.should_stop, on_outcome=self.totals.count, connection=connection
                )
        if due and self.looping:
            self.logger.info("%s: %s", self.worker, self.totals.summary)
        return len(due) >= limit

    def stopped_details(self):
        return f" after {self.totals.summary}"

    def finish(self):
        self.report(f"notification mail: {self.totals.summary}")
        failed = self.totals.get(mail_selectors.FAILED)
        self.exit_failed(failed, f"{failed} mail(s) failed; see the ledger (admin: Mail ledger).")
