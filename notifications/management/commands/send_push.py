"""Send the Web Push notifications that are due (docs/how-to/turn-on-push.md)."""

import logging
from collections.abc import Iterator

from django.core.management.base import CommandError

from notifications.channel_worker import ChannelWorkerCommand
from notifications.mail import selectors as mail_selectors
from notifications.mail.queue import PUSH
from notifications.models import MailQueue
from notifications.push.sender import PushSender
from project.operations.backlog import Backlog

PUSH_THREADS = 8


class Command(ChannelWorkerCommand):
    help = (
        "Send the Web Push notifications that are due (replies, mentions, watched threads, likes and "
        "staff messages that people chose to get by push) to each of the person's subscribed browsers. "
        "Each push is checked again just before it goes (still unread, push still on, thread not muted) "
        "and goes at most once, also with several of these running on several machines; the `sends` "
        "ledger records every outcome (channel push). Without --loop: one pass, then exit (exit code 1 "
        "if a push failed). With --loop: keep polling until SIGTERM/SIGINT, which finishes the pushes "
        "under way. --threads pushes go at once (each still goes once)."
    )
    worker = "send_push"
    logger = logging.getLogger("notifications.push.sender")
    channel = PUSH
    unit = "push"
    summary_label = "push notifications"
    failed_message = "{failed} push(es) failed; see the ledger (admin: Mail ledger)."
    finishing = "the pushes under way"
    poll_seconds = 1.0
    poll_help = "seconds between polls when no push is due"
    loop_help = "keep running and poll for due pushes"
    limit_help = "due pushes taken per shard and pass"
    sender: PushSender | None = None  # made at the first pass, closed by `finish`

    def add_arguments(self, parser):
        super().add_arguments(parser)
        parser.add_argument(
            "--threads", type=int, default=PUSH_THREADS, help=f"pushes sent at once (default {PUSH_THREADS})"
        )

    def check_options(self, **options):
        if options["threads"] < 1:
            raise CommandError("--threads must be at least 1.")

    def backlog(self) -> Backlog:
        """Pushes due and not yet sent: the due Query of each push shard (at most MAIL_BACKLOG_CAP)."""
        due = mail_selectors.mail_queue_due(limit=mail_selectors.MAIL_BACKLOG_CAP, channel=PUSH)
        return Backlog(
            label="pushes due",
            count=len(due),
            capped=len(due) >= mail_selectors.MAIL_BACKLOG_CAP,
            oldest_at=int(due[0].due_at) / 1000 if due else None,
        )

    def processed(self, due: list[MailQueue]) -> Iterator[tuple[MailQueue, str]]:
        """The pass's pushes, `--threads` at a time (notifications/push/sender.py `PushSender`)."""
        if self.sender is None:
            self.sender = PushSender(threads=self.options["threads"])
        for done in self.sender.process(due, stopped=self.stop.is_set):
            yield done
            self.should_stop()  # in --loop mode: keeps the heartbeat fresh through a long pass

    def finish(self):
        if self.sender is not None:
            self.sender.close()
        super().finish()
