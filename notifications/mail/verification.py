"""E-mail address verification: notification mail goes only to an address proven by a link sent to it."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.mail import EmailMultiAlternatives
from django.db import transaction
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.translation import gettext

from notifications.mail.content import site_url
from notifications.mail.queue import mail_queue_item
from notifications.mail.tokens import address_digest, address_read, address_token, verify_read, verify_token
from project.clock import clock
from project.dynamo.transactions import write_retrying
from project.errors import ApplicationError, RateLimited
from project.http.locales import language_of
from project.limits.store import limit_enforce, recipient_mail_allow

if TYPE_CHECKING:
    from django.db.models import QuerySet

    from social.models import User

EMAIL_VERIFY = "email_verify"  # the mail queue's kind (notifications.mail.account_links sends it)
# Verification mails asked for, per account and address: nobody mail-bombs an address through the button.
VERIFY_MAIL_RULES = "5/hour,20/day"
# Links in one verification mail: the asking account's, then others waiting on the address (and,
# whenever others wait, one link to a page listing every one of them, however many there are).
VERIFY_LINKS_PER_MAIL = 20
ADDRESS_PAGE_SIZE = 50  # accounts a page of the address's link lists


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


def verification_mail_queue(*, user: User) -> str:
    """Queue the verification link of the account's current address for the mail worker; answers
    its source. The link is made when the mail is sent (`verification_message`), and not at all if
    the account has another address or verified it by then. Twice: two items, two mails. Dies
    before the put: no mail (the person asks again); after it: the worker sends it once."""
    source = f"{EMAIL_VERIFY}:{uuid.uuid4().hex}"
    item = mail_queue_item(
        user_id=str(user.pk),
        kind=EMAIL_VERIFY,
        source=source,
        entry_id=address_digest(user.email),
        due_ms=clock.now_ms(),
    )
    write_retrying(item.save, what="verification mail queue put")
    return source


def email_verification_send(*, user: User) -> None:
    """Queue a mail to the account's address with its verification link (RateLimited past
    VERIFY_MAIL_RULES for the account and this address, or past LIMIT_MAIL_VERIFY_TO for the address).

    The address's budget is shared by every account giving it, so sign-ups on a stranger's
    address cannot flood it; and every mail to an address carries the way to verify each other
    account waiting on it (`verification_message`), so strangers spending that budget cannot keep
    the address's owner from their link: each mail they cause carries it, however many accounts
    they made."""
    if not user.email:
        raise ApplicationError(gettext("Enter an e-mail address first."), field="email")
    limit_enforce(name="mail_verify", subject=f"{user.pk}:{address_digest(user.email)}", rules=VERIFY_MAIL_RULES)
    if not recipient_mail_allow(name="mail_verify_to", email=user.email):
        raise RateLimited(
            gettext(
                "Too many verification links went to this address recently: the next one sent to it will carry a "
                "link for your account too, or ask again in an hour."
            ),
            retry_after=3600,
        )
    verification_mail_queue(user=user)


def accounts_waiting_on(email: str) -> QuerySet[User]:
    """The active accounts given `email` (any letter case) that have not verified it, newest first."""
    return (
        get_user_model()
        .objects.filter(email__iexact=email.strip(), email_verified=False, is_active=True)
        .order_by("-pk")
    )


def verification_message(*, user: User) -> EmailMultiAlternatives:
    """The verification mail to the account's address: its link first, then a link for each of
    the newest other accounts waiting on that address and, when any other waits, the address's
    link to the page listing them all (tokens made now, valid EMAIL_VERIFY_TIMEOUT)."""
    others = list(accounts_waiting_on(user.email).exclude(pk=user.pk)[:VERIFY_LINKS_PER_MAIL])
    shown = others[: VERIFY_LINKS_PER_MAIL - 1]
    accounts = [user, *shown]
    links = [
        {
            "username": account.get_username(),
            "link": site_url(f"/me/email/verify/{verify_token(user_id=str(account.pk), email=account.email)}/"),
        }
        for account in accounts
    ]
    # No display name: sign-up takes any address, and the mail must not greet its owner with
    # words a stranger chose. The username (letters, digits, @ . + - _) says which account.
    context = {
        "username": user.get_username(),
        "link": links[0]["link"],
        "others": links[1:],
        "more": len(others) > len(shown),
        "all_link": site_url(f"/me/email/accounts/{address_token(user.email)}/") if others else "",
    }
    with translation.override(language_of(user.locale) or settings.LANGUAGE_CODE):  # the account's language
        return EmailMultiAlternatives(
            subject=gettext("Verify your e-mail address on Dynamo Social"),
            body=render_to_string("notifications/mail/verify.txt", context),
            to=[user.email],
        )


def email_verify_account(*, token: str) -> User | None:
    """The active account a token would verify the address of, read only (the page's GET shows a
    button: mail scanners follow links, and must not verify anything); None when it would not."""
    found = verify_read(token)
    if found is None:
        return None
    user_id, email = found
    return get_user_model().objects.filter(pk=user_id, is_active=True, email=email).first()


def _verified(accounts: QuerySet[User]) -> User | None:
    """Mark the address of the first of `accounts` verified, under a row lock (twice, or two at
    once: verified once); that account, or None when there is none."""
    with transaction.atomic():
        user = accounts.select_for_update().first()
        if user is not None and not user.email_verified:
            user.email_verified = True
            user.save(update_fields=["email_verified"])
    return user


def email_verify(*, token: str) -> User | None:
    """Mark the address a token was made for verified; the account, or None when the token is
    bad, expired, or made for an address the account no longer has. Twice: stays verified."""
    found = verify_read(token)
    if found is None:
        return None
    user_id, email = found
    return _verified(get_user_model().objects.filter(pk=user_id, is_active=True, email=email))


def address_accounts(*, token: str) -> tuple[str, QuerySet[User]] | None:
    """The address an address token was made for, and the accounts waiting on it; None when the
    token is bad or expired. Read only (the page's GET lists them, each with a button)."""
    email = address_read(token)
    if email is None:
        return None
    return email, accounts_waiting_on(email)


def address_account_verify(*, email: str, username: str) -> User | None:
    """Verify the address of the account `username` when it is active and still waits on
    `email` (read from a valid address token); None otherwise. Twice: the second finds it no
    longer waiting and answers None (the page says so)."""
    return _verified(accounts_waiting_on(email).filter(username=username))
