"""Sending notification e-mail exactly once: claim, re-check, ledger, send, mark.

A mail is a `mail_queue` item (put in the transaction of the write it is about,
notifications/mail/queue.py) and, once a sender took it up, a `sends` ledger line.
`mail_process` is one sender's work on one due item:

1. Claim the queue item: `due_at` (the value seen) moves to now + MAIL_LEASE_SECONDS, on
   condition it is still that value. Two senders never work on one item at once; one that
   dies holding it lets the lease run out and another takes it up.
2. A ledger line for it already exists: it was handled (sent, failed, skipped, or the
   sender died after claiming it: `unknown`). Nothing is sent; the queue item goes.
3. Re-check at send time (notifications/mail/checks.py): still unread, the kind's e-mail
   still on, thread not muted, an active account with a verified address. A failed check
   puts a `skipped` line saying why.
4. Claim the ledger line: put `sending` on condition it is absent. Of any number of
   concurrent senders (a lease that ran out under a slow one), exactly one succeeds.
5. The per-recipient limit (over: `skipped`) and the site's limit (over: the line is taken
   back and the mail waits until the window ends), then send, then mark `sent` (or `failed`).
6. Delete the queue item.

Dies anywhere: before 4, the next sender does it all again (nothing was sent); between 4
and the mark, the line stays `sending` and reads `unknown` once its lease is over, and no
sender sends it again (at most once beats twice for mail; the ledger tells staff which
ones to look at). After the mark, the next sender finds the line and deletes the item.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.core.mail import EmailMultiAlternatives
from django.utils import translation

from notifications.mail.account import ACCOUNT
from notifications.mail.account_links import LINK_KINDS, link_mail_plan
from notifications.mail.checks import QUIET, Recipient, mail_verdict, unread_items
from notifications.mail.content import account_message, notification_message, quiet_message
from notifications.mail.quiet import quiet_rollup_queue, quiet_until
from notifications.mail.selectors import EMAIL, FAILED, SENDING, SENT, SKIPPED, ledger_get, ledger_line
from notifications.models import MailQueue, Send
from notifications.presence import is_present, present_window_ms
from project.clock import clock
from project.dynamo.transactions import LabelledTransactWrite, conditional_write, transact, write_retrying
from project.limits.store import limit_hit

if TYPE_CHECKING:
    from django.core.mail.backends.base import BaseEmailBackend
    from pynamodb.expressions.update import Action

logger = logging.getLogger(__name__)

# What `mail_process` reports for one item.
TAKEN = "taken"  # another sender holds it
ALREADY = "already"  # its ledger line exists: handled before
POSTPONED = "postponed"  # the site's limit: due again when its window ends
SITE_SUBJECT = "site"
# Kinds whose feed entry rolls several events up ("Bob and 2 others replied"): one mail per
# entry while it stays unread (the entry's id changes once it is read), not one per event.
ENTRY_KINDS = ("reply", "mention", "message")
ALREADY_MAILED = "already e-mailed about this notification (still unread)"
QUIET_ITEMS = 20  # unread items a quiet hours' roll-up lists; the rest are counted


def entry_marker_source(entry_id: str) -> str:
    """The ledger source that says "a mail about this feed entry went" (`entry:<entry_id>`)."""
    return f"entry:{entry_id}"


def _expiry(*, marker: bool = False) -> datetime:
    """When TTL may delete a ledger line put now: as long as read notifications are kept
    (NOTIFICATION_READ_RETENTION_DAYS: the notification log shows these lines), and an entry's
    marker MAIL_LEDGER_DAYS (a feed entry may stay unread that long and roll more events up)."""
    days = settings.MAIL_LEDGER_DAYS if marker else settings.NOTIFICATION_READ_RETENTION_DAYS
    return clock.utcnow() + timedelta(days=int(days))


def _lease_ms() -> int:
    return int(settings.MAIL_LEASE_SECONDS) * 1000


def _new_line(
    *,
    user_id: str,
    source: str,
    kind: str,
    state: str,
    entry_id: str,
    address: str,
    reason: str = "",
    channel: str = EMAIL,
) -> Send:
    """A ledger line not yet written: a `sending` one holds a lease and a token of ours."""
    now = clock.now_ms()
    return Send(
        user_id,
        ledger_line(channel=channel, source=source),
        channel=channel,
        source=source,
        kind=kind,
        state=state,
        reason=reason[:300],
        entry_id=entry_id,
        address=address,
        token=uuid.uuid4().hex,
        at=now,
        lease_until=now + _lease_ms() if state == SENDING else 0,
        expires_at=_expiry(),
    )


def ledger_put(
    *,
    user_id: str,
    source: str,
    kind: str,
    state: str,
    entry_id: str = "",
    reason: str = "",
    address: str = "",
    channel: str = EMAIL,
) -> Send | None:
    """Put a new ledger line (`sending` with a lease and a token of ours, or a final state) on
    condition the person has none about `source` on e-mail. None when one exists (another
    sender's, or an earlier run's). Twice: the second finds the first and writes nothing."""
    line = _new_line(
        user_id=user_id,
        source=source,
        kind=kind,
        state=state,
        entry_id=entry_id,
        address=address,
        reason=reason,
        channel=channel,
    )
    if conditional_write(lambda: line.save(condition=Send.line.does_not_exist()), what="mail ledger claim"):
        return line
    return None


def ledger_claim_with_entry(
    *, user_id: str, source: str, kind: str, entry_id: str, address: str
) -> tuple[Send | None, bool]:
    """Claim the line about `source` and the entry's marker in one transaction (both absent).

    (line, False): claimed, send. (None, False): the line exists (another sender has it).
    (None, True): a mail about the same unread entry went already (an earlier event rolled
    into it): a `skipped` line is put instead. Twice or concurrently: one claimer wins the
    transaction, the others find the line. Dies half way: the transaction is all or nothing.
    """
    line = _new_line(user_id=user_id, source=source, kind=kind, state=SENDING, entry_id=entry_id, address=address)
    marker = Send(
        user_id,
        ledger_line(channel=EMAIL, source=entry_marker_source(entry_id)),
        channel=EMAIL,
        source=entry_marker_source(entry_id),
        kind=kind,
        state=SENT,
        reason=f"marks the mail about {source}",
        entry_id=entry_id,
        at=line.at,
        expires_at=_expiry(marker=True),
    )

    def build(transaction: LabelledTransactWrite) -> None:
        transaction.save(line, condition=Send.line.does_not_exist(), label="line")
        transaction.save(marker, condition=Send.line.does_not_exist(), label="entry")

    outcome = transact(build, what="mail ledger claim")
    if outcome.ok:
        return line, False
    if "line" in outcome.failed_labels:
        return None, False
    ledger_put(user_id=user_id, source=source, kind=kind, state=SKIPPED, entry_id=entry_id, reason=ALREADY_MAILED)
    return None, True


def ledger_mark(line: Send, *, state: str, reason: str = "", subject: str = "") -> bool:
    """`sending` -> `state`, on condition the line is still ours and `sending` (False when not)."""
    actions: list[Action] = [Send.state.set(state), Send.at.set(clock.now_ms()), Send.reason.set(reason[:300])]
    if subject:
        actions.append(Send.subject.set(subject[:200]))
    return conditional_write(
        lambda: line.update(actions=actions, condition=(Send.token == line.token) & (Send.state == SENDING)),
        what="mail ledger mark",
    )


def ledger_take_back(line: Send) -> bool:
    """Delete a `sending` line of ours before anything was sent (the site limit said wait), and
    the entry's marker claimed with it (`ledger_claim_with_entry`), so the mail can go later."""
    taken = conditional_write(
        lambda: line.delete(condition=(Send.token == line.token) & (Send.state == SENDING)),
        what="mail ledger take back",
    )
    if taken and line.kind in ENTRY_KINDS and line.entry_id:
        marker = Send(line.user_id, ledger_line(channel=EMAIL, source=entry_marker_source(line.entry_id)))
        conditional_write(
            lambda: marker.delete(condition=Send.reason == f"marks the mail about {line.source}"),
            what="mail ledger take back",
        )
    return taken


def _take_back_quietly(line: Send) -> None:
    try:
        ledger_take_back(line)
    except Exception:  # the error that brought us here may stop this write too: it reads unknown
        logger.warning("mail %s to user %s: ledger line not taken back", line.source, line.user_id)


@dataclass
class Delivered:
    outcome: str  # sent, failed, skipped, postponed, already
    retry_after: float = 0.0


def mail_deliver(
    *,
    recipient: Recipient,
    source: str,
    kind: str,
    entry_id: str,
    build: Callable[[], EmailMultiAlternatives],
    connection: BaseEmailBackend | None = None,
) -> Delivered:
    """Claim the ledger line, apply the limits, send the mail `build()` makes, mark the line.

    The one path every mail takes (notifications and digests), so each is sent at most
    once per person and source whatever runs concurrently or dies (module doc).
    """
    if kind in ENTRY_KINDS and entry_id:
        line, already = ledger_claim_with_entry(
            user_id=recipient.user_id, source=source, kind=kind, entry_id=entry_id, address=recipient.address
        )
        if already:
            return Delivered(SKIPPED)
    else:
        line = ledger_put(
            user_id=recipient.user_id,
            source=source,
            kind=kind,
            state=SENDING,
            entry_id=entry_id,
            address=recipient.address,
        )
    if line is None:
        return Delivered(ALREADY)
    try:
        if not limit_hit(
            name="mail_recipient", subject=recipient.user_id, rules=settings.MAIL_LIMIT_RECIPIENT, liftable=False
        ).allowed:
            ledger_mark(line, state=SKIPPED, reason="per-recipient mail limit (MAIL_LIMIT_RECIPIENT)")
            return Delivered(SKIPPED)
        site = limit_hit(name="mail_site", subject=SITE_SUBJECT, rules=settings.MAIL_LIMIT_SITE, liftable=False)
        if not site.allowed:
            ledger_take_back(line)
            return Delivered(POSTPONED, retry_after=site.retry_after)
        with translation.override(recipient.language):  # the recipient's language, never the sender's
            message = build()
    except Exception:
        # Nothing went out: give the line back so that the mail goes later, not `unknown`.
        _take_back_quietly(line)
        raise
    if connection is not None:
        message.connection = connection
    try:
        message.send()
    except Exception as error:  # SMTP refusals, timeouts: the mail may or may not have gone
        logger.warning("mail %s to user %s failed: %s", source, recipient.user_id, error)
        ledger_mark(line, state=FAILED, reason=f"{type(error).__name__}: {error}", subject=str(message.subject))
        return Delivered(FAILED)
    ledger_mark(line, state=SENT, subject=str(message.subject))
    return Delivered(SENT)


def mail_queue_claim(item: MailQueue) -> bool:
    """Hold a due queue item for MAIL_LEASE_SECONDS (condition: its `due_at` is the one we read)."""
    seen = item.due_at
    return conditional_write(
        lambda: item.update(
            actions=[MailQueue.due_at.set(clock.now_ms() + _lease_ms()), MailQueue.attempts.add(1)],
            condition=MailQueue.due_at == seen,
        ),
        what="mail queue claim",
    )


def mail_queue_done(item: MailQueue) -> None:
    """Delete a handled queue item (idempotent: gone already is fine)."""
    write_retrying(item.delete, what="mail queue delete")


def mail_queue_postpone(item: MailQueue, *, seconds: float) -> None:
    write_retrying(
        lambda: item.update(
            actions=[MailQueue.due_at.set(clock.now_ms() + int(max(seconds, 1.0) * 1000))],
            condition=MailQueue.mail_id.exists(),
        ),
        what="mail queue postpone",
    )


def queue_item_skip(item: MailQueue, reason: str, *, channel: str = EMAIL) -> str:
    """Put a `skipped` line saying `reason` about a claimed queue item of `channel`, and delete the
    item. Twice: the line exists and stays, the item is gone either way."""
    ledger_put(
        user_id=item.user_id,
        source=item.source,
        kind=item.kind,
        state=SKIPPED,
        entry_id=item.entry_id,
        reason=reason,
        channel=channel,
    )
    mail_queue_done(item)
    return SKIPPED


def _finish(item: MailQueue, delivered: Delivered) -> str:
    if delivered.outcome == POSTPONED:
        mail_queue_postpone(item, seconds=delivered.retry_after)
        return POSTPONED
    mail_queue_done(item)
    return delivered.outcome


def _link_mail_process(item: MailQueue, connection: BaseEmailBackend | None) -> str:
    """A reset or verification mail (notifications/mail/account_links.py), claimed: its accounts
    read now, the ledger checked, the budget decided, then the mail with links made now."""
    plan = link_mail_plan(item)
    recipient = plan.recipient
    if recipient is None:  # no account: nothing to send, no ledger line to file
        mail_queue_done(item)
        return SKIPPED
    if ledger_get(user_id=recipient.user_id, channel=EMAIL, source=item.source) is not None:
        mail_queue_done(item)
        return ALREADY
    skip = plan.skip or plan.decide()
    if skip or plan.build is None:
        ledger_put(user_id=recipient.user_id, source=item.source, kind=item.kind, state=SKIPPED, reason=skip)
        notice = plan.notice()
        if notice is not None:
            source, build = notice
            mail_deliver(
                recipient=recipient, source=source, kind=item.kind, entry_id="", build=build, connection=connection
            )
        mail_queue_done(item)
        return SKIPPED
    delivered = mail_deliver(
        recipient=recipient, source=item.source, kind=item.kind, entry_id="", build=plan.build, connection=connection
    )
    return _finish(item, delivered)


def mail_process(*, item: MailQueue, connection: BaseEmailBackend | None = None) -> str:
    """Handle one due mail (module doc): sent, failed, skipped, already, postponed or taken."""
    if not mail_queue_claim(item):
        return TAKEN
    if item.kind in LINK_KINDS:
        return _link_mail_process(item, connection)
    if ledger_get(user_id=item.user_id, channel=EMAIL, source=item.source) is not None:
        mail_queue_done(item)
        return ALREADY
    verdict = mail_verdict(user_id=item.user_id, kind=item.kind, entry_id=item.entry_id)
    if verdict.skip or verdict.recipient is None or verdict.about is None:
        return queue_item_skip(item, verdict.skip)
    recipient, about = verdict.recipient, verdict.about
    if item.kind != ACCOUNT and is_present(user_id=item.user_id):
        # Seen in an open tab (notifications/presence.py): wait; read meanwhile, the next check skips it.
        mail_queue_postpone(item, seconds=present_window_ms() / 1000)
        return POSTPONED
    if item.kind not in (ACCOUNT, QUIET):
        until = quiet_until(recipient=recipient, now=clock.utcnow())
        if until is not None:  # held for the one roll-up mail at the end of the quiet hours
            quiet_rollup_queue(user_id=item.user_id, until=until)
            reason = f"quiet hours: in the one mail at {until.strftime('%Y-%m-%d %H:%M')} UTC if still unread"
            return queue_item_skip(item, reason)
    build: Callable[[], EmailMultiAlternatives]
    if item.kind == QUIET:
        with translation.override(recipient.language):
            items, more = unread_items(user_id=item.user_id, limit=QUIET_ITEMS)
        if not items:
            return queue_item_skip(item, "nothing unread when the quiet hours ended")
        build = lambda: quiet_message(recipient=recipient, items=items, more=more)  # noqa: E731
    else:
        compose = account_message if item.kind == ACCOUNT else notification_message
        build = lambda: compose(recipient=recipient, about=about)  # noqa: E731
    delivered = mail_deliver(
        recipient=recipient,
        source=item.source,
        kind=item.kind,
        entry_id=item.entry_id,
        build=build,
        connection=connection,
    )
    return _finish(item, delivered)


@dataclass
class MailStats:
    counts: dict[str, int] = field(default_factory=dict)

    def count(self, outcome: str) -> None:
        self.counts[outcome] = self.counts.get(outcome, 0) + 1

    def get(self, outcome: str) -> int:
        return self.counts.get(outcome, 0)

    @property
    def summary(self) -> str:
        order = (SENT, FAILED, SKIPPED, ALREADY, POSTPONED, TAKEN)
        return ", ".join(f"{self.get(outcome)} {outcome}" for outcome in order)
