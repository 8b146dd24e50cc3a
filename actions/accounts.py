"""Sign-up with an e-mail address: social's new account, and notifications' verification link to it."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from notifications.mail.verification import email_verification_send
from project.after_response import after_response
from project.errors import ApplicationError

if TYPE_CHECKING:
    from social.models import User

logger = logging.getLogger(__name__)


def signup_verification_queue(*, user: User) -> None:
    """Mail a new account's address its verification link once the answer is out (at once outside
    a request). Until it is followed the address gets no reset or notification mail. Nothing for an
    account without an address; a link the address's budget refuses is not sent (the person asks
    again from the settings page). Twice: two links, each counted."""
    if not user.email:
        return

    def send() -> None:
        try:
            email_verification_send(user=user)
        except ApplicationError as refusal:  # RateLimited among them
            logger.info("sign-up verification link not sent: %s", refusal.message)

    if not after_response(send):
        send()
