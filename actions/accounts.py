"""Sign-up: social's new account, and notifications' verification link to its e-mail address.

The page and the API sign people up through `account_sign_up`, so both count the network's
sign-up limit, refuse a taken name the same way and mail the same link."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from notifications.mail.verification import email_verification_send
from project.errors import ApplicationError
from social.services import user_create

if TYPE_CHECKING:
    from social.models import User

logger = logging.getLogger(__name__)


def account_sign_up(*, username: str, password: str, display_name: str = "", email: str = "", address: str) -> User:
    """Create an account for a sign-up from `address` (social.services.user_create: the
    network's limit first, RateLimited when over; a taken name ApplicationError on `username`)
    and queue its address's verification link. Twice: the second is refused, the name taken."""
    user = user_create(username=username, password=password, display_name=display_name, email=email, address=address)
    signup_verification_queue(user=user)
    return user


def signup_verification_queue(*, user: User) -> None:
    """Queue a new account's verification link for the mail worker. Until it is followed the
    address gets no reset or notification mail. Nothing for an account without an address; a
    link the address's budget refuses is not queued (the next mail to the address carries it,
    or the person asks again from the settings page). Twice: two links, each counted."""
    if not user.email:
        return
    try:
        email_verification_send(user=user)
    except ApplicationError as refusal:  # RateLimited among them
        logger.info("sign-up verification link not queued: %s", refusal.message)
