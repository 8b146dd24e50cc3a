"""Two-factor against a stolen session (project/identity/two_factor/): a key seen on the set-up
page never becomes the account's later key, turning it on, renewing the recovery codes and
turning it off need the password (checked inside the log-in limits), and every change is
mailed to the verified address through the mail queue (notifications/mail/account.py)."""

import re
import time
from urllib.parse import unquote

import pytest
from django.core import mail
from django.test import Client
from django_otp.oath import TOTP
from django_otp.plugins.otp_static.models import StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from tests.notifications.mail_helpers import send_due, verified
from tests.security.test_two_factor import PASSWORD, code_now, password_step, turn_on

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a-fresh-Passw0rd"


@pytest.fixture(autouse=True)
def _clock_stands_still(manual_clock):
    """The manual clock moves the set-up's 10 minutes and the limits' windows, not TOTP's time."""


@pytest.fixture
def owner(make_user):
    return make_user("owner")


def key_shown(browser: Client) -> bytes:
    """The key the set-up page shows (its base32 text, as an app takes it)."""
    from base64 import b32decode

    page = browser.get("/me/two-factor/").content.decode()
    found = re.search(r'<code class="secret">([A-Z2-7 ]+)</code>', page)
    assert found is not None
    return b32decode(found.group(1).replace(" ", ""))


def code_of(key: bytes) -> str:
    totp = TOTP(key, 30, 0, 6, 0)
    totp.time = time.time()
    return f"{totp.token():06d}"


def test_a_key_seen_once_is_not_the_account_key_after_a_new_visit_and_a_new_password(owner):
    thief = Client()
    thief.force_login(owner)
    stolen = key_shown(thief)
    home = Client()
    home.force_login(owner)
    answer = home.post(
        "/accounts/password/change/",
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert answer.status_code == 302
    assert not TOTPDevice.objects.filter(user=owner).exists()  # the unconfirmed key is gone
    mine = key_shown(home)
    assert mine != stolen
    confirmed = home.post("/me/two-factor/", {"action": "confirm", "code": code_of(mine), "password": NEW_PASSWORD})
    assert "Two-factor log-in is on" in confirmed.content.decode()
    browser = Client()
    step = browser.post("/accounts/login/", {"username": "owner", "password": NEW_PASSWORD})["Location"]
    refused = browser.post(step, {"code": code_of(stolen)})
    assert refused.status_code == 200 and "not right" in refused.content.decode()


def test_each_visit_shows_a_new_key_and_only_the_last_turns_it_on(owner):
    browser = Client()
    browser.force_login(owner)
    first, second = key_shown(browser), key_shown(browser)
    assert first != second
    old = browser.post("/me/two-factor/", {"action": "confirm", "code": code_of(first), "password": PASSWORD})
    assert "That code is not right" in old.content.decode()
    assert not TOTPDevice.objects.filter(user=owner, confirmed=True).exists()
    assert f"{second.hex()}" == TOTPDevice.objects.get(user=owner).key  # a refused code's page keeps the key


def test_a_key_expires_after_ten_minutes(owner, manual_clock):
    browser = Client()
    browser.force_login(owner)
    key = key_shown(browser)
    manual_clock.advance(601)
    late = browser.post("/me/two-factor/", {"action": "confirm", "code": code_of(key), "password": PASSWORD})
    assert "more than 10 minutes old" in late.content.decode()
    assert not TOTPDevice.objects.filter(user=owner, confirmed=True).exists()


def test_a_reset_or_an_admin_password_forgets_the_unconfirmed_key(owner):
    browser = Client()
    browser.force_login(owner)
    key_shown(browser)
    owner.set_password(NEW_PASSWORD)  # what the reset page, the admin and `changepassword` do
    owner.save()
    assert not TOTPDevice.objects.filter(user=owner).exists()
    browser.force_login(owner)  # the new password ended the session
    key_shown(browser)
    owner.refresh_from_db()
    owner.check_password(NEW_PASSWORD)  # a log-in (maybe upgrading the hash) is no new password
    owner.save()
    assert TOTPDevice.objects.filter(user=owner, confirmed=False).exists()


def test_turning_it_on_needs_the_password(owner):
    browser = Client()
    browser.force_login(owner)
    browser.get("/me/two-factor/")
    bare = browser.post("/me/two-factor/", {"action": "confirm", "code": code_now(owner)})
    assert bare.status_code == 200 and "This field is required" in bare.content.decode()
    wrong = browser.post("/me/two-factor/", {"action": "confirm", "code": code_now(owner), "password": "nope"})
    assert "That is not your password" in wrong.content.decode()
    assert not TOTPDevice.objects.filter(user=owner, confirmed=True).exists()


def test_wrong_passwords_on_the_two_factor_page_are_limited(owner, limits):
    browser = Client()
    browser.force_login(owner)
    browser.get("/me/two-factor/")
    answers = [
        browser.post(
            "/me/two-factor/", {"action": "confirm", "code": "000000", "password": "nope"}, REMOTE_ADDR="10.6.0.1"
        )
        for _ in range(4)
    ]
    assert [answer.status_code for answer in answers] == [200, 200, 200, 429]


def test_new_recovery_codes_need_the_password(owner):
    browser = Client()
    browser.force_login(owner)
    old = turn_on(browser, owner)
    bare = browser.post("/me/two-factor/", {"action": "renew"}).content.decode()
    wrong = browser.post("/me/two-factor/", {"action": "renew", "password": "nope"}).content.decode()
    assert "<li><code>" not in bare and "<li><code>" not in wrong
    assert "That is not your password" in wrong
    assert StaticToken.objects.filter(device__user=owner, token=old[0]).exists()  # the old codes still work


def test_every_change_is_mailed_to_the_verified_address_by_the_mail_worker(owner):
    verified(owner)
    browser = Client()
    browser.force_login(owner)
    turn_on(browser, owner)
    browser.post("/me/two-factor/", {"action": "renew", "password": PASSWORD})
    browser.post("/me/two-factor/remove/", {"password": PASSWORD, "code": code_now(owner)})
    assert mail.outbox == []  # nothing is sent in the request
    send_due()
    subjects = sorted(message.subject for message in mail.outbox)
    assert subjects == [
        "New recovery codes were made for your account",
        "Two-factor log-in was turned off for your account",
        "Two-factor log-in was turned on for your account",
    ]
    assert {tuple(message.to) for message in mail.outbox} == {("owner@example.com",)}
    assert all("List-Unsubscribe" not in message.extra_headers for message in mail.outbox)
    browser.post("/me/two-factor/remove/", {"password": PASSWORD, "code": "000000"})  # off already: no mail
    send_due()
    assert len(mail.outbox) == 3


def test_the_code_just_used_to_turn_it_on_is_refused_as_just_used_and_cleared(owner):
    browser = Client()
    browser.force_login(owner)
    browser.get("/me/two-factor/")
    code = code_now(owner)
    browser.post("/me/two-factor/", {"action": "confirm", "code": code, "password": PASSWORD})
    other = Client()
    step = password_step(other)["Location"]
    again = other.post(step, {"code": code}).content.decode()  # the same 30 s
    assert "That code was just used: wait for the next code" in again and "not right" not in again
    assert f'value="{code}"' not in again  # the field is empty for the next code
    wrong = other.post(step, {"code": "000000"}).content.decode()
    assert "That code is not right" in wrong and 'value="000000"' not in wrong


def test_the_token_api_refuses_the_code_just_used_as_just_used(owner):
    browser = Client()
    browser.force_login(owner)
    browser.get("/me/two-factor/")
    code = code_now(owner)
    browser.post("/me/two-factor/", {"action": "confirm", "code": code, "password": PASSWORD})
    body = {"username": "owner", "password": PASSWORD, "otp": code}
    again = Client().post("/api/auth/token/", body, content_type="application/json")  # the same 30 s
    assert again.status_code == 400
    assert "That code was just used: wait for the next code" in again.content.decode()
    wrong = Client().post("/api/auth/token/", {**body, "otp": "000000"}, content_type="application/json")
    assert wrong.status_code == 400 and "That code is not right" in wrong.content.decode()


def test_a_recovery_code_log_in_says_how_many_are_left(owner):
    browser = Client()
    browser.force_login(owner)
    codes = turn_on(browser, owner)
    other = Client()
    step = password_step(other)["Location"]
    page = other.post(step, {"code": codes[0]}, follow=True).content.decode()
    assert "You logged in with a recovery code: 9 recovery codes left" in page


def test_the_codes_page_offers_copy_and_a_download(owner):
    browser = Client()
    browser.force_login(owner)
    browser.get("/me/two-factor/")
    page = browser.post(
        "/me/two-factor/", {"action": "confirm", "code": code_now(owner), "password": PASSWORD}
    ).content.decode()
    codes = re.findall(r"<li><code>([a-z2-7]{8})</code></li>", page)
    link = re.search(r'href="data:text/plain;charset=utf-8,([^"]+)" download="([^"]+)"', page)
    assert link and link.group(2).endswith(".txt")
    assert unquote(link.group(1)) == "".join(f"{code}\n" for code in codes)
    assert 'class="copy-codes"' in page and "copy_codes.js" in page
