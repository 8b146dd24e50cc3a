"""Send the Web Push notifications that are due (docs/how-to/turn-on-push.md)."""

import logging

import requests

from notifications.channel_worker import ChannelWorkerCommand
from notifications.mail import selectors as mail_selectors
from notifications.mail.queue import PUSH
from notifications.models import MailQueue
from notifications.push.sender import push_process
from project.operations.backlog import Backlog


class Command(ChannelWorkerCommand):
    help = (
        "Send the Web Push notifications that are due (replies, mentions, watched threads, likes and "
        "staff messages that people chose to get by push) to each of the person's subscribed browsers. "
        "Each push is checked again just before it goes (still unread, push still on, thread not muted) "
        "and goes at most once, also with several of these running on several machines; the `sends` "
        "ledger records every outcome (channel push). Without --loop: one pass, then exit (exit code 1 "
        "if a push failed). With --loop: keep polling until SIGTERM/SIGINT, which finishes the current push."
    )
    worker = "send_push"
    logger = logging.getLogger("notifications.push.sender")
    channel = PUSH
    unit = "push"
    summary_label = "push notifications"
    failed_message = "{failed} push(es) failed; see the ledger (admin: Mail ledger)."
    finishing = "the current push"
    poll_seconds = 1.0
    poll_help = "seconds between polls when no push is due"
    loop_help = "keep running and poll for due pushes"
    limit_help = "due pushes taken per shard and pass"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.session = requests.Session()  # one connection pool: keep-alive to each push service

    def backlog(self) -> Backlog:
        """Pushes due and not yet sent: the due Query of each push shard (at most MAIL_BACKLOG_CAP)."""
        due = mail_selectors.mail_queue_due(limit=mail_selectors.MAIL_BACKLOG_CAP, channel=PUSH)
        return Backlog(
            label="pushes due",
            count=len(due),
            capped=len(due) >= mail_selectors.MAIL_BACKLOG_CAP,
            oldest_at=int(due[0].due_at) / 1000 if due else None,
        )

    def process(self, item: MailQueue) -> str:
        return push_process(item=item, session=self.session)
