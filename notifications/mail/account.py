"""Mails about the account's own safety (two-factor turned on or off, new recovery codes): put
in the mail queue like every mail and sent by the mail worker (`mail_notifications`), never in
the request, to the verified address whatever the notification settings say (they carry no
unsubscribe link: a person cannot turn off being told that their account changed).

A queue item of kind ACCOUNT names in its `entry_id` which mail it is (ACCOUNT_MAILS).
"""

from __future__ import annotations

import uuid
from typing import Any

from django.utils.translation import gettext_lazy

from notifications.mail.queue import mail_queue_item
from project.clock import clock
from project.dynamo.transactions import write_retrying
from project.identity.two_factor.services import CODES_RENEWED, TURNED_OFF, TURNED_ON

ACCOUNT = "account"

# which mail -> (subject and first line, what it means, where to act), worded in the recipient's language
ACCOUNT_MAILS = {
    "two_factor_on": (
        gettext_lazy("Two-factor log-in was turned on for your account"),
        gettext_lazy(
            "From now on a log-in needs your password and a code from the authenticator app set up just now. "
            "If this was not you, reset your password and turn two-factor log-in off in your settings."
        ),
        "/me/two-factor/",
    ),
    "two_factor_off": (
        gettext_lazy("Two-factor log-in was turned off for your account"),
        gettext_lazy(
            "Your password alone now logs you in. If this was not you, change your password and turn it on again."
        ),
        "/me/two-factor/",
    ),
    "recovery_codes_renewed": (
        gettext_lazy("New recovery codes were made for your account"),
        gettext_lazy(
            "The earlier recovery codes no longer work. If this was not you, change your password "
            "and get new recovery codes in your settings."
        ),
        "/me/two-factor/",
    ),
}
_TWO_FACTOR_MAILS = {
    TURNED_ON: "two_factor_on",
    TURNED_OFF: "two_factor_off",
    CODES_RENEWED: "recovery_codes_renewed",
}


def account_mail_queue(*, user_id: str, what: str) -> str:
    """Queue the account mail `what` (a key of ACCOUNT_MAILS) to `user_id`, due now; answers its source.

    Each call is its own mail (a new source): twice, two mails. Dies before the put: no
    mail; after it: the mail worker sends it once (its ledger line keyed by the source).
    Whether it goes (an active account with a verified address) is decided at send time.
    """
    if what not in ACCOUNT_MAILS:
        raise ValueError(f"no account mail {what!r}")
    source = f"account:{what}:{uuid.uuid4().hex}"
    item = mail_queue_item(user_id=user_id, kind=ACCOUNT, source=source, entry_id=what, due_ms=clock.now_ms())
    write_retrying(item.save, what="account mail queue put")
    return source


def second_factor_changed_mail(sender: Any, user_id: str, change: str, **kwargs: Any) -> None:
    """Receiver of project.identity.two_factor.services.second_factor_changed: mail the owner."""
    account_mail_queue(user_id=user_id, what=_TWO_FACTOR_MAILS[change])
