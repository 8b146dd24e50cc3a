"""Guessing one account's password from a botnet: 200 fresh addresses, one guess each, on the
default limits (OWASP's device cookies, project/identity/login_limits.py).

The untrusted budget is spent after LOGIN_UNTRUSTED_FAILURES guesses, whatever their
addresses; every further attempt without the account's device cookie is refused (429)
without its password being checked. The owner's browser, holding its device cookie, still
logs in; a new browser of the owner gets in through the reset mail, whose success issues
the device cookie; and the owner is told how many networks failed.
"""

import re
from unittest import mock

import pytest
from django.test import Client
from rest_framework.test import APIClient

from notifications.feed.selectors import feed_entries_list
from project.errors import LockedOut
from project.identity.login_limits import login_attempt_begin
from project.testing.harness import in_threads
from tests.notifications.mail_helpers import mailed

pytestmark = pytest.mark.django_db

PASSWORD = "pw-Secret-123"
NEW_PASSWORD = "a-fresh-Passw0rd"
BOTNET = 200


@pytest.fixture(autouse=True)
def _clock_stands_still(manual_clock):
    """The manual clock: no window ends mid-test."""


def fresh_address(n: int) -> str:
    return f"10.{50 + n // 250}.{n % 250}.7"


def log_in(browser: Client, password: str, address: str):
    return browser.post("/accounts/login/", {"username": "owner", "password": password}, REMOTE_ADDR=address)


def test_200_fresh_addresses_get_the_untrusted_budget_and_not_one_guess_more(make_user, settings):
    owner = make_user("owner")
    owner.email, owner.email_verified = "owner@example.com", True  # a reset mails verified addresses only
    owner.save()
    home = Client()
    assert log_in(home, PASSWORD, "192.0.2.10").status_code == 302  # the owner's browser, before the attack
    home.post("/accounts/logout/")

    checks = mock.patch("social.models.User.check_password", autospec=True, side_effect=lambda user, pw: False)
    with checks as check_password:
        statuses = []
        for n in range(BOTNET):  # each guess from a new address and a browser without cookies
            answer = APIClient().post(
                "/api/auth/token/",
                {"username": "owner", "password": f"guess{n}"},
                format="json",
                REMOTE_ADDR=fresh_address(n),
            )
            statuses.append(answer.status_code)
        right_password = APIClient().post(
            "/api/auth/token/", {"username": "OWNER", "password": PASSWORD}, format="json", REMOTE_ADDR="10.99.0.1"
        )
        checked = check_password.call_count
    budget = settings.LOGIN_UNTRUSTED_FAILURES
    assert statuses == [400] * budget + [429] * (BOTNET - budget)
    assert checked == budget  # refused attempts are never checked
    assert right_password.status_code == 429 and int(right_password["Retry-After"]) > 0

    # The owner's own browser still logs in, at home or anywhere.
    assert log_in(home, PASSWORD, "198.51.100.3").status_code == 302

    # A new browser of the owner is refused with the right password, and told the way in.
    phone = Client()
    refused = log_in(phone, PASSWORD, "192.0.2.10")
    assert refused.status_code == 429 and "reset your password by e-mail" in refused.content.decode()
    phone.post("/accounts/password/reset/", {"email": "owner@example.com"}, REMOTE_ADDR="192.0.2.10")
    [message] = mailed()
    link = re.search(r"https?://[^/\s]+(/accounts/password/reset/\S+/)", str(message.body)).group(1)
    form_url = phone.get(link, follow=True).redirect_chain[-1][0]
    reset = phone.post(form_url, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert reset.status_code == 302
    assert log_in(phone, NEW_PASSWORD, "192.0.2.10").status_code == 302  # the reset trusted this browser

    notices = [entry for entry in feed_entries_list(user_id=str(owner.pk)).results if entry.kind == "notice"]
    assert len(notices) == 1 and "from 3 networks" in notices[0].body  # told at the third failure


def test_200_concurrent_guesses_from_200_addresses_get_exactly_the_budget(settings):
    """Counted before checked, by conditional writes: a simultaneous burst cannot slip past."""

    def guess(n: int) -> bool:
        try:
            login_attempt_begin(username="target", address=fresh_address(n))
        except LockedOut:
            return False
        return True

    assert sum(in_threads(guess, BOTNET)) == settings.LOGIN_UNTRUSTED_FAILURES


def test_ipv6_guesses_from_one_64_are_one_address(make_user, settings):
    make_user("owner")
    settings.LOGIN_UNTRUSTED_FAILURES = 50
    statuses = [
        APIClient()
        .post(
            "/api/auth/token/",
            {"username": "owner", "password": "wrong"},
            format="json",
            REMOTE_ADDR=f"2001:db8:1:2::{n:x}",
        )
        .status_code
        for n in range(12)
    ]
    assert statuses == [400] * settings.LOGIN_FAILURE_LIMIT + [429] * (12 - settings.LOGIN_FAILURE_LIMIT)
