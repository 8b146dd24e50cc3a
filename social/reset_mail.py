"""The password-reset mail: one per request, only to an address an account verified, within
the account's mail budgets (docs/explanation/security.md "Password reset"): the owner's own,
for requests from a network that logged in to the account or a browser holding its device
cookie, and the strangers' one for every other request. When strangers' requests were withheld
the owner is told, at most once a day."""

from __future__ import annotations

import logging
from collections.abc import Mapping

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.core.mail import send_mail
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import translation
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from project.accounts.login_devices import device_nonce_in
from project.accounts.login_limits import login_address_known
from project.http.locales import language_of
from project.limits.store import limit_hit, once_per_window

logger = logging.getLogger(__name__)


WITHHELD_NOTICE_SECONDS = 86400
WITHHELD_SUBJECT = "Password reset mails for your account were held back"
WITHHELD_BODY = (
    "Someone asked Dynamo Social for password reset mails for your account ({usernames}) more often "
    "than we send them, from networks and browsers that never logged in to it, so we held some back.\n\n"
    "If it was you: ask for the reset from a browser or a network you logged in from before "
    "(those have a budget of their own), or wait a few hours. If it was not you, nothing needs doing: "
    "your password is unchanged.\n"
)


def _owner_asks(accounts: list, *, address: str, cookies: Mapping[str, str]) -> bool:
    """The request came from a network that logged in to one of the accounts, or a browser
    holding the device cookie of one."""
    return any(
        device_nonce_in(cookies, user) or login_address_known(username=user.get_username(), address=address)
        for user in accounts
    )


def password_reset_mail_send(*, email: str, address: str = "", cookies: Mapping[str, str] | None = None) -> int:
    """Mail `email` a reset link for each active account that verified it (User.email_verified),
    all in one mail, if the accounts' budget allows: LIMIT_PASSWORD_RESET_MAIL_OWNER when the
    requester (`address`, `cookies`: the request's) is the owner's network or browser, else
    LIMIT_PASSWORD_RESET_MAIL, both counted per account (the first that verified the address),
    never per typed address. The mails sent (0 or 1). A request the strangers' budget refused
    tells the owner (one mail a day at most).

    Unverified addresses get nothing: anyone can sign up with anyone's address, and a reset
    mail would then greet a stranger's chosen name in that inbox. Run after the answer is
    sent (the view), so the answer takes as long whatever happens here. Twice: two mails
    (each counted). Dies between counting and sending: the mail stays counted, none is sent.
    """
    accounts = [
        user
        for user in get_user_model()
        .objects.filter(email__iexact=email.strip(), email_verified=True, is_active=True)
        .order_by("pk")
        if user.has_usable_password()
    ]
    if not accounts:
        return 0
    owner = _owner_asks(accounts, address=address, cookies=cookies or {})
    budget = "password_reset_mail_owner" if owner else "password_reset_mail"
    if not limit_hit(name=budget, subject=f"account:{accounts[0].pk}").allowed:
        logger.info("reset mail not sent: the account's %s budget is spent", budget)
        if not owner and once_per_window(
            name="reset_withheld_notice", subject=str(accounts[0].pk), seconds=WITHHELD_NOTICE_SECONDS
        ):
            usernames = ", ".join(user.get_username() for user in accounts)
            send_mail(
                subject=WITHHELD_SUBJECT,
                message=WITHHELD_BODY.format(usernames=usernames),
                from_email=None,
                recipient_list=[accounts[0].email],
            )
        return 0
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
        send_mail(
            subject=render_to_string("registration/password_reset_subject.txt").strip(),
            message=render_to_string("registration/password_reset_email.html", {"accounts": links}),
            from_email=None,
            recipient_list=[accounts[0].email],
        )
    return 1
