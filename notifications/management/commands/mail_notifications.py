"""Send the notification e-mail that is due, and the digests (docs/explanation/email.md)."""

import contextlib
import logging
from collections.abc import Iterator

from django.core.mail import get_connection

from notifications.channel_worker import ChannelWorkerCommand
from notifications.mail import digest as mail_digest
from notifications.mail import selectors as mail_selectors
from notifications.mail import services as mail_services
from notifications.models import MailQueue


class Command(ChannelWorkerCommand):
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
    unit = "mail"
    summary_label = "notification mail"
    failed_message = "{failed} mail(s) failed; see the ledger (admin: Mail ledger)."
    finishing = "the current mail"
    poll_seconds = 5.0
    poll_help = "seconds between polls when no mail is due"
    loop_help = "keep running and poll for due mail and digests"
    limit_help = "due mails taken per shard and pass"

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument("--no-digests", action="store_true", help="send notification mails only, no digests")

    def backlog(self):
        return mail_selectors.mail_queue_backlog()

    def process(self, item: MailQueue) -> str:
        return mail_services.mail_process(item=item, connection=self.connection)

    @contextlib.contextmanager
    def pass_open(self) -> Iterator[None]:
        # One connection for the pass (one SMTP session for many mails), opened at the first mail.
        with get_connection() as connection:
            self.connection = connection
            yield

    def pass_more(self) -> None:
        if not self.options["no_digests"]:
            mail_digest.digests_send(
                should_stop=self.should_stop, on_outcome=self.totals.count, connection=self.connection
            )
