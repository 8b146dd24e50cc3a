"""The password-reset mail: one per request, only to an address an account verified, within
the account's mail budgets (docs/explanation/security.md "Password reset"): the owner's own,
for requests from a network that logged in to the account or a browser holding its device
cookie, and the strangers' one for every other request. When strangers' requests were withheld
the owner is told, at most once a day.

The request does the same work whatever was typed (one query of the accounts, the device
cookies checked in memory, then one queue put: notifications.mail.account_links); the mail
worker decides the rest at send time with the functions below, and makes the links then, so
nothing queued holds a secret.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.core.mail import EmailMultiAlternatives
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from django.utils.translation import gettext_lazy

from project.http.locales import language_of
from project.identity.login_devices import device_nonce_in
from project.identity.login_limits import login_address_known
from project.limits.store import limit_hit, once_per_window

if TYPE_CHECKING:
    from social.models import User

logger = logging.getLogger(__name__)


WITHHELD_NOTICE_SECONDS = 86400
WITHHELD_SUBJECT = gettext_lazy("Password reset mails for your account were held back")
WITHHELD_BODY = gettext_lazy(
    "Someone asked Dynamo Social for password reset mails for your account ({usernames}) more often "
    "than we send them, from networks and browsers that never logged in to it, so we held some back.\n\n"
    "If it was you: ask for the reset from a browser or a network you logged in from before "
    "(those have a budget of their own), or wait a few hours. If it was not you, nothing needs doing: "
    "your password is unchanged.\n"
)


def reset_accounts(*, email: str) -> list[User]:
    """The active accounts with a usable password that verified `email` (any letter case),
    oldest first: one query, whatever the address."""
    return [
        user
        for user in get_user_model()
        .objects.filter(email__iexact=email.strip(), email_verified=True, is_active=True)
        .order_by("pk")
        if user.has_usable_password()
    ]


def reset_device_owner_ids(accounts: Iterable[User], *, cookies: Mapping[str, str]) -> list[str]:
    """The ids of those accounts whose valid device cookie the request holds (in memory: no read)."""
    return [str(user.pk) for user in accounts if device_nonce_in(cookies, user)]


def reset_owner_asks(accounts: Iterable[User], *, device_owner_ids: Iterable[str], address: str) -> bool:
    """The request came from a browser holding the device cookie of one of the accounts, or from
    a network that logged in to one (a strongly consistent read per account)."""
    accounts = list(accounts)
    if {str(user.pk) for user in accounts} & set(device_owner_ids):
        return True
    return any(login_address_known(username=user.get_username(), address=address) for user in accounts)


def reset_budget_allows(*, account: User, owner: bool) -> bool:
    """Count one reset mail against the account's budget: LIMIT_PASSWORD_RESET_MAIL_OWNER for
    the owner's network or browser, else LIMIT_PASSWORD_RESET_MAIL (one conditional write).
    Twice: two counted. Dies after counting: that mail stays counted."""
    budget = "password_reset_mail_owner" if owner else "password_reset_mail"
    allowed = limit_hit(name=budget, subject=f"account:{account.pk}").allowed
    if not allowed:
        logger.info("reset mail not sent: the account's %s budget is spent", budget)
    return allowed


def reset_withheld_notice_due(*, account: User) -> bool:
    """True once a day per account: the owner is told that strangers' reset mails were held back."""
    return once_per_window(name="reset_withheld_notice", subject=str(account.pk), seconds=WITHHELD_NOTICE_SECONDS)


def reset_message(accounts: list[User]) -> EmailMultiAlternatives:
    """The reset mail, a link for each account: its tokens are made now (Django's token generator:
    valid PASSWORD_RESET_TIMEOUT, and until the password or the last log-in changes)."""
    links = [
        {
            "username": user.get_username(),
            "link": settings.SITE_URL
            + reverse(
                "password_reset_confirm",
                kwargs={
                    "uidb64": urlsafe_base64_encode(force_bytes(user.pk)),
                    "token": default_token_generator.make_token(user),
                },
            ),
        }
        for user in accounts
    ]
    with translation.override(language_of(accounts[0].locale) or settings.LANGUAGE_CODE):  # the owner's language
        return EmailMultiAlternatives(
            subject=render_to_string("registration/password_reset_subject.txt").strip(),
            body=render_to_string("registration/password_reset_email.html", {"accounts": links}),
            to=[accounts[0].email],
        )


def reset_withheld_message(accounts: list[User]) -> EmailMultiAlternatives:
    usernames = ", ".join(user.get_username() for user in accounts)
    return EmailMultiAlternatives(
        subject=str(WITHHELD_SUBJECT), body=str(WITHHELD_BODY).format(usernames=usernames), to=[accounts[0].email]
    )
