"""E-mail address verification: notification mail goes only to an address proven by a link sent to it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.translation import gettext

from notifications.mail.content import site_url
from notifications.mail.tokens import verify_read, verify_token
from project.errors import ApplicationError, RateLimited
from project.http.locales import language_of
from project.limits.store import limit_enforce, recipient_mail_allow

if TYPE_CHECKING:
    from social.models import User

# Verification mails asked for, per account: nobody mail-bombs an address through the button.
VERIFY_MAIL_RULES = "5/hour,20/day"


def email_address_set(*, user: User, email: str) -> bool:
    """Set the account's address; a different one is unverified until its link is followed.
    True when it changed. Twice: the second changes nothing."""
    email = get_user_model().objects.normalize_email(email.strip())
    if email == user.email:
        return False
    user.email = email
    user.email_verified = False
    user.save(update_fields=["email", "email_verified"])
    return True


def email_verification_send(*, user: User) -> None:
    """Mail the account's address a link that verifies it (RateLimited past VERIFY_MAIL_RULES for the
    account, or past LIMIT_MAIL_VERIFY_TO for the address)."""
    if not user.email:
        raise ApplicationError("Enter an e-mail address first.", field="email")
    limit_enforce(name="mail_verify", subject=str(user.pk), rules=VERIFY_MAIL_RULES)
    # Sign-up takes any address, shared by any number of accounts: the address's own budget
    # (every account together) keeps them from flooding a stranger's inbox with links.
    if not recipient_mail_allow(name="mail_verify_to", email=user.email):
        raise RateLimited(
            "Too many verification links went to this address recently. Please try again later.", retry_after=3600
        )
    link = site_url(f"/me/email/verify/{verify_token(user_id=str(user.pk), email=user.email)}/")
    # No display name: sign-up takes any address, and the mail must not greet its owner with
    # words a stranger chose. The username (letters, digits, @ . + - _) says which account.
    context = {"username": user.get_username(), "link": link}
    with translation.override(language_of(user.locale) or settings.LANGUAGE_CODE):  # the account's language
        message = EmailMultiAlternatives(
            subject=gettext("Verify your e-mail address on Dynamo Social"),
            body=render_to_string("notifications/mail/verify.txt", context),
            to=[user.email],
        )
    message.send()


def email_verify_account(*, token: str) -> User | None:
    """The active account a token would verify the address of, read only (the page's GET shows a
    button: mail scanners follow links, and must not verify anything); None when it would not."""
    found = verify_read(token)
    if found is None:
        return None
    user_id, email = found
    return get_user_model().objects.filter(pk=user_id, is_active=True, email=email).first()


def email_verify(*, token: str) -> User | None:
    """Mark the address a token was made for verified; the account, or None when the token is
    bad, expired, or made for an address the account no longer has. Twice: stays verified."""
    found = verify_read(token)
    if found is None:
        return None
    user_id, email = found
    with transaction.atomic():
        user = get_user_model().objects.select_for_update().filter(pk=user_id, is_active=True).first()
        if user is None or user.email != email:
            return None
        if not user.email_verified:
            user.email_verified = True
            user.save(update_fields=["email_verified"])
    return user
