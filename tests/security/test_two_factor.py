"""Two-factor log-in (project/identity/two_factor/): set-up, the code step on the log-in page, the
admin and the token API, recovery codes, removal, TOTP_REQUIRED_FOR_STAFF; wrong codes count
as failed log-ins in the limits."""

import re
import time

import pytest
from django.test import Client
from django_otp.oath import TOTP
from django_otp.plugins.otp_totp.models import TOTPDevice

from project.identity.login_devices import device_cookie_name

pytestmark = pytest.mark.django_db

PASSWORD = "pw-Secret-123"


@pytest.fixture(autouse=True)
def _clock_stands_still(manual_clock):
    """The manual clock moves the limits' windows and the code step's wait, not TOTP's time."""


def code_now(user) -> str:
    """The code the person's app shows now. django-otp accepts a time step once: each call
    starts a new one (as if 30 s passed), so a test can log in again."""
    device = TOTPDevice.objects.get(user=user)
    TOTPDevice.objects.filter(pk=device.pk).update(last_t=-1)
    totp = TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift)
    totp.time = time.time()
    return f"{totp.token():0{device.digits}d}"


def turn_on(browser: Client, user) -> list[str]:
    page = browser.get("/me/two-factor/").content.decode()
    assert "<svg" in page and "<?xml" not in page  # the QR code, inline
    answer = browser.post("/me/two-factor/", {"action": "confirm", "code": code_now(user), "password": PASSWORD})
    assert answer.status_code == 200
    return re.findall(r"<li><code>([a-z2-7]{8})</code></li>", answer.content.decode())


@pytest.fixture
def owner(make_user):
    return make_user("owner")


@pytest.fixture
def with_two_factor(owner):
    browser = Client()
    browser.force_login(owner)
    return turn_on(browser, owner)


def password_step(browser: Client, path="/accounts/login/", username="owner", address="10.5.0.1"):
    return browser.post(path, {"username": username, "password": PASSWORD}, REMOTE_ADDR=address)


def test_set_up_shows_a_qr_code_takes_a_code_and_gives_recovery_codes(owner):
    browser = Client()
    browser.force_login(owner)
    browser.get("/me/two-factor/")
    wrong = browser.post("/me/two-factor/", {"action": "confirm", "code": "000000", "password": PASSWORD})
    assert "That code is not right" in wrong.content.decode()
    assert not TOTPDevice.objects.filter(user=owner, confirmed=True).exists()
    codes = turn_on(browser, owner)
    assert len(codes) == 10
    assert "10 recovery codes left" in browser.get("/me/two-factor/").content.decode()
    assert 'href="/me/two-factor/"' in browser.get("/me/settings/").content.decode()


def test_log_in_asks_for_the_code_after_the_password(owner, with_two_factor):
    browser = Client()
    first = password_step(browser)
    assert first.status_code == 302 and first["Location"].startswith("/accounts/login/code/")
    assert browser.get("/me/settings/").status_code == 302  # not logged in yet
    assert device_cookie_name("owner") not in first.cookies
    wrong = browser.post(first["Location"], {"code": "123456"}, REMOTE_ADDR="10.5.0.1")
    assert wrong.status_code == 200 and "That code is not right" in wrong.content.decode()
    done = browser.post(first["Location"], {"code": code_now(owner)}, REMOTE_ADDR="10.5.0.1")
    assert done.status_code == 302 and done["Location"] == "/"
    assert device_cookie_name("owner") in done.cookies
    assert browser.get("/me/settings/").status_code == 200


def test_a_recovery_code_logs_in_once(owner, with_two_factor):
    code = with_two_factor[0]
    browser = Client()
    step = password_step(browser)["Location"]
    assert browser.post(step, {"code": code.upper()}).status_code == 302
    again = Client()
    step = password_step(again)["Location"]
    assert again.post(step, {"code": code}).status_code == 200  # used up
    assert "9 recovery codes left" in browser.get("/me/two-factor/").content.decode()


def test_wrong_codes_count_as_failed_log_ins(owner, with_two_factor, limits):
    browser = Client()
    step = password_step(browser)["Location"]  # 1 attempt of the pair's 3
    for _ in range(2):
        assert browser.post(step, {"code": "000000"}, REMOTE_ADDR="10.5.0.1").status_code == 200
    refused = browser.post(step, {"code": code_now(owner)}, REMOTE_ADDR="10.5.0.1")
    assert refused.status_code == 429 and "Too many failed log-ins" in refused.content.decode()


def test_the_code_step_waits_only_so_long(owner, with_two_factor, manual_clock):
    browser = Client()
    step = password_step(browser)["Location"]
    manual_clock.advance(301)
    late = browser.post(step, {"code": code_now(owner)})
    assert late.status_code == 302 and late["Location"] == "/accounts/login/"
    assert browser.get("/me/settings/").status_code == 302


def test_the_token_api_needs_the_code(api, owner, with_two_factor):
    body = {"username": "owner", "password": PASSWORD}
    missing = api.post("/api/auth/token/", body, format="json")
    assert missing.status_code == 400 and "send `otp`" in missing.json()["otp"][0]
    wrong = api.post("/api/auth/token/", {**body, "otp": "000000"}, format="json")
    assert wrong.status_code == 400 and "not right" in wrong.json()["otp"][0]
    right = api.post("/api/auth/token/", {**body, "otp": code_now(owner)}, format="json")
    assert right.status_code == 200 and right.json()["token"]
    blank = api.post("/api/auth/token/", {**body, "otp": ""}, format="json")
    assert blank.status_code == 400 and "otp" in blank.json()


def test_the_admin_log_in_has_the_code_step(make_user):
    boss = make_user("boss", is_staff=True)
    setup = Client()
    setup.force_login(boss)
    turn_on(setup, boss)
    browser = Client()
    first = password_step(browser, "/admin/login/", "boss")
    assert first.status_code == 302 and first["Location"].startswith("/admin/login/code/")
    page = browser.get(first["Location"]).content.decode()
    assert 'name="code"' in page and "Django administration" not in page
    done = browser.post(first["Location"], {"code": code_now(boss)})
    assert done.status_code == 302 and done["Location"] == "/admin/"
    assert browser.get("/admin/").status_code == 200


def test_turning_it_off_needs_the_password_and_a_code(owner, with_two_factor):
    browser = Client()
    browser.force_login(owner)
    wrong_password = browser.post("/me/two-factor/remove/", {"password": "nope", "code": code_now(owner)})
    assert "not your password" in wrong_password.content.decode()
    wrong_code = browser.post("/me/two-factor/remove/", {"password": PASSWORD, "code": "000000"})
    assert "That code is not right" in wrong_code.content.decode()
    assert TOTPDevice.objects.filter(user=owner).exists()
    off = browser.post("/me/two-factor/remove/", {"password": PASSWORD, "code": code_now(owner)})
    assert off.status_code == 302 and not TOTPDevice.objects.filter(user=owner).exists()
    assert password_step(Client()).status_code == 302  # the password alone logs in again
    assert Client().post("/api/auth/token/", {"username": "owner", "password": PASSWORD}).status_code == 200


def test_new_recovery_codes_replace_the_old(owner, with_two_factor):
    browser = Client()
    browser.force_login(owner)
    renewed = browser.post("/me/two-factor/", {"action": "renew", "password": PASSWORD}).content.decode()
    new_codes = re.findall(r"<li><code>([a-z2-7]{8})</code></li>", renewed)
    assert len(new_codes) == 10 and not set(new_codes) & set(with_two_factor)
    step = password_step(Client())["Location"]
    assert Client().post(step, {"code": with_two_factor[0]}).status_code == 302  # a new browser: no pending
    stale = Client()
    step = password_step(stale)["Location"]
    assert stale.post(step, {"code": with_two_factor[0]}).status_code == 200
    assert stale.post(step, {"code": new_codes[0]}).status_code == 302


def test_staff_can_be_required_to_use_it(make_user, settings):
    boss = make_user("boss", is_staff=True)
    browser = Client()
    browser.force_login(boss)
    assert browser.get("/admin/").status_code == 200  # off by default
    settings.TOTP_REQUIRED_FOR_STAFF = True
    sent = browser.get("/admin/")
    assert sent.status_code == 302 and sent["Location"] == "/me/two-factor/?next=%2Fadmin%2F"
    turn_on(browser, boss)  # this session used a code
    assert browser.get("/admin/").status_code == 200
    other = Client()
    other.force_login(boss)  # a session that did not
    assert other.get("/admin/")["Location"].startswith("/admin/login/")
    assert other.get("/me/settings/").status_code == 302  # logged out
    member = make_user("member")
    other.force_login(member)
    assert other.get("/me/two-factor/").status_code == 200  # nobody else is made to
