"""Mails carrying a link that acts on an account: the password reset (and the notice that reset
mails were held back) and the e-mail verification. Like every mail they are queue items sent by
the mail worker (`mail_notifications`), never in the request, and the links are made by the
worker when it sends: a queue item holds an address, account ids and a client network, never a
token.

- A reset request puts one item whatever was typed (the same one write for an address with a
  verified account and for one without): kind PASSWORD_RESET, keyed by a digest of the address,
  its `entry_id` the typed address, the client network and the accounts whose device cookie
  the request held. The worker finds the accounts again, decides the budget
  (social.reset_mail) and sends one mail listing a link for each, or the held-back notice.
- A verification link asked for (sign-up, the settings button, an address change) puts one
  item of kind EMAIL_VERIFY for the account, its `entry_id` a digest of the address: a link
  for an address the account no longer has is not sent.

Exactly once as every queued mail (notifications/mail/services.py): the `sends` ledger line,
claimed before the mail goes, keeps any number of workers from sending one item twice; a worker
that dies after claiming leaves the line `unknown` and the mail is not sent again (the person
asks again); one that dies before leaves the item to the next worker.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model

from notifications.mail.checks import Recipient
from notifications.mail.queue import mail_queue_item
from notifications.mail.tokens import address_digest
from notifications.mail.verification import EMAIL_VERIFY, verification_message
from project.clock import clock
from project.dynamo.transactions import write_retrying
from social import reset_mail

if TYPE_CHECKING:
    from django.core.mail import EmailMultiAlternatives

    from notifications.models import MailQueue
    from social.models import User

PASSWORD_RESET = "password_reset"
LINK_KINDS = (PASSWORD_RESET, EMAIL_VERIFY)


def reset_mail_queue(*, email: str, address: str, device_owner_ids: list[str]) -> str:
    """Queue the reset mail asked for `email` from the client network `address`; answers its source.

    One put, whether or not an account verified the address (the worker finds out). Twice: two
    items, two mails if the budget allows (each counted). Dies before the put: no mail (the
    person asks again); after it: the worker sends it once.
    """
    request = {"email": email.strip(), "address": address, "owners": device_owner_ids}
    source = f"{PASSWORD_RESET}:{uuid.uuid4().hex}"
    item = mail_queue_item(
        user_id=f"address:{address_digest(email)}",
        kind=PASSWORD_RESET,
        source=source,
        entry_id=json.dumps(request),
        due_ms=clock.now_ms(),
    )
    write_retrying(item.save, what="reset mail queue put")
    return source


@dataclass(frozen=True)
class LinkMail:
    """What the worker does with a link mail's item: `skip` says why nothing goes (with no
    `recipient`: not even a ledger line, there is no account to file it under); else `decide()`,
    run once the ledger says the item was not handled, answers a reason to skip ("" to send,
    counting the budget), and `build` makes the mail with its links."""

    recipient: Recipient | None = None
    skip: str = ""
    decide: Callable[[], str] = lambda: ""
    build: Callable[[], EmailMultiAlternatives] | None = None
    # The reset's held-back notice: (its source, what makes it), when `decide` withheld the mail.
    notice: Callable[[], tuple[str, Callable[[], EmailMultiAlternatives]] | None] = lambda: None


def _recipient(user: User, address: str) -> Recipient:
    # No display name: the address may not be the account's owner's yet (a stranger chose it).
    return Recipient(user_id=str(user.pk), username=user.get_username(), name="", address=address)


def _reset_plan(item: MailQueue) -> LinkMail:
    request = json.loads(item.entry_id)
    accounts = reset_mail.reset_accounts(email=request["email"])
    if not accounts:
        return LinkMail(skip="no account verified the address")
    account = accounts[0]
    withheld: list[bool] = []

    def decide() -> str:
        owner = reset_mail.reset_owner_asks(
            accounts, device_owner_ids=request.get("owners", []), address=request.get("address", "")
        )
        if reset_mail.reset_budget_allows(account=account, owner=owner):
            return ""
        withheld.append(not owner)
        return "the account's reset mail budget is spent"

    def notice() -> tuple[str, Callable[[], EmailMultiAlternatives]] | None:
        if withheld and withheld[0] and reset_mail.reset_withheld_notice_due(account=account):
            return f"reset_withheld:{item.source}", lambda: reset_mail.reset_withheld_message(accounts)
        return None

    return LinkMail(
        recipient=_recipient(account, account.email),
        decide=decide,
        build=lambda: reset_mail.reset_message(accounts),
        notice=notice,
    )


def _verify_plan(item: MailQueue) -> LinkMail:
    try:
        user = get_user_model().objects.filter(pk=int(item.user_id), is_active=True).first()
    except ValueError:
        user = None
    if user is None:
        return LinkMail(skip="no active account")
    recipient = _recipient(user, user.email)
    if not user.email or address_digest(user.email) != item.entry_id:
        return LinkMail(recipient=recipient, skip="the account has another address now")
    if user.email_verified:
        return LinkMail(recipient=recipient, skip="the address is verified already")
    return LinkMail(recipient=recipient, build=lambda: verification_message(user=user))


def link_mail_plan(item: MailQueue) -> LinkMail:
    """What to do with a queued link mail (read at send time: the accounts as they are now)."""
    return _reset_plan(item) if item.kind == PASSWORD_RESET else _verify_plan(item)
