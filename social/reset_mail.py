"""The password-reset mail: one per request, only to an address an account verified, within
the address's mail budget (docs/explanation/security.md "Password reset")."""

from __future__ import annotations

import logging

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.tokens import default_token_generator
from django.core.mail import send_mail
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode

from project.limits.store import recipient_mail_allow

logger = logging.getLogger(__name__)


def password_reset_mail_send(*, email: str) -> int:
    """Mail `email` a reset link for each active account that verified it (User.email_verified),
    all in one mail, if the address's LIMIT_PASSWORD_RESET_MAIL budget allows; the mails sent (0 or 1).

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
    if not recipient_mail_allow(name="password_reset_mail", email=email):
        logger.info("reset mail not sent: the address's reset-mail budget is spent")
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
    send_mail(
        subject=render_to_string("registration/password_reset_subject.txt").strip(),
        message=render_to_string("registration/password_reset_email.html", {"accounts": links}),
        from_email=None,
        recipient_list=[accounts[0].email],
    )
    return 1
