"""Device cookies (project/identity/login_devices.py): what a browser that logged in holds, and how
its log-ins are limited apart from strangers' (project/identity/login_limits.py)."""

import pytest
from django.test import Client
from rest_framework.test import APIClient

from project.identity.login_devices import device_cookie_name, device_version

pytestmark = pytest.mark.django_db

PASSWORD = "pw-Secret-123"
NEW_PASSWORD = "a-fresh-Passw0rd"


@pytest.fixture(autouse=True)
def _clock_stands_still(manual_clock):
    """The manual clock: no window ends mid-test."""


def log_in(browser, password, address="10.8.0.1", username="owner"):
    answer = browser.post("/accounts/login/", {"username": username, "password": password}, REMOTE_ADDR=address)
    if answer.status_code == 302:
        browser.post("/accounts/logout/", REMOTE_ADDR=address)  # the session ends, the device cookie stays
    return answer


def spend_the_untrusted_budget(settings, username="owner"):
    for n in range(settings.LOGIN_UNTRUSTED_FAILURES):
        log_in(Client(), "wrong", f"10.9.{n}.1", username)
    assert log_in(Client(), PASSWORD, "10.9.99.1", username).status_code == 429


def test_a_log_in_sets_a_signed_http_only_cookie_per_account_and_a_new_one_each_time(make_user, settings):
    make_user("owner")
    make_user("other")
    browser = Client()
    first = log_in(browser, PASSWORD)
    cookie = first.cookies[device_cookie_name("owner")]
    assert cookie["httponly"] and cookie["samesite"] == "Lax"
    assert cookie["max-age"] == settings.LOGIN_DEVICE_COOKIE_DAYS * 86400
    assert "owner" not in cookie.key and "owner" not in cookie.value  # nothing names the account
    second = log_in(browser, PASSWORD)
    assert second.cookies[device_cookie_name("owner")].value != cookie.value  # a new nonce
    log_in(browser, PASSWORD, username="other")
    assert {device_cookie_name("owner"), device_cookie_name("other")} <= set(browser.cookies)
    assert log_in(Client(), "wrong").cookies.get(device_cookie_name("owner")) is None  # a failure sets none


def test_the_cookie_is_secure_where_sessions_are(make_user, settings):
    make_user("owner")
    settings.SESSION_COOKIE_SECURE = True
    answer = Client().post("/accounts/login/", {"username": "owner", "password": PASSWORD}, secure=True)
    assert answer.cookies[device_cookie_name("owner")]["secure"]


def test_a_known_browser_is_not_refused_for_strangers_guesses(make_user, limits):
    make_user("owner")
    home = Client()
    log_in(home, PASSWORD, "10.8.0.1")
    for n in range(10):  # strangers spend the address, pair and untrusted limits, even at the owner's address
        log_in(Client(), "wrong", "10.8.0.1")
    assert log_in(Client(), PASSWORD, "10.8.0.1").status_code == 429
    assert log_in(home, PASSWORD, "10.8.0.1").status_code == 302


def test_a_cookie_that_keeps_failing_is_locked_by_itself(make_user, limits):
    make_user("owner")
    stolen, home = Client(), Client()
    log_in(stolen, PASSWORD, "10.8.0.2")
    log_in(home, PASSWORD, "10.8.0.3")
    for _ in range(limits.LOGIN_DEVICE_FAILURE_LIMIT):
        assert log_in(stolen, "wrong", "10.8.0.2").status_code == 200
    locked = log_in(stolen, PASSWORD, "10.8.0.2")
    assert locked.status_code == 429 and "from this browser" in locked.content.decode()
    assert log_in(home, PASSWORD, "10.8.0.3").status_code == 302  # another browser of the owner
    assert log_in(Client(), PASSWORD, "10.8.0.4").status_code == 302  # the untrusted budget is untouched


def test_a_forged_or_foreign_cookie_counts_as_none(make_user, limits):
    make_user("owner")
    make_user("mallory")
    attacker = Client()
    log_in(attacker, PASSWORD, "10.8.0.5", username="mallory")
    # Mallory's own cookie, and a made-up one, under the owner's cookie name.
    attacker.cookies[device_cookie_name("owner")] = attacker.cookies[device_cookie_name("mallory")].value
    spend_the_untrusted_budget(limits)
    assert log_in(attacker, PASSWORD, "10.8.0.5").status_code == 429
    attacker.cookies[device_cookie_name("owner")] = "made-up:1:signature"
    assert log_in(attacker, PASSWORD, "10.8.0.5").status_code == 429


def test_an_api_client_keeps_and_sends_the_cookie(make_user, limits):
    make_user("owner")
    app = APIClient()
    assert app.post("/api/auth/token/", {"username": "owner", "password": PASSWORD}, format="json").status_code == 200
    assert device_cookie_name("owner") in app.cookies
    spend_the_untrusted_budget(limits)
    again = app.post("/api/auth/token/", {"username": "owner", "password": PASSWORD}, format="json")
    assert again.status_code == 200


def test_the_owner_can_change_their_password_while_the_budget_is_spent(make_user, limits):
    owner = make_user("owner")
    spend_the_untrusted_budget(limits)
    session = Client()
    session.force_login(owner)
    changed = session.post(
        "/accounts/password/change/",
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
        REMOTE_ADDR="10.8.0.6",
    )
    assert changed.status_code == 302


def test_an_operator_can_lift_the_untrusted_budget(make_user, limits):
    from django.core.management import call_command

    from project.limits.store import limits_forget_memory

    make_user("owner")
    spend_the_untrusted_budget(limits)
    call_command("login_unlock", "owner")
    limits_forget_memory()  # every process asks DynamoDB again within a minute
    assert log_in(Client(), PASSWORD, "10.8.0.7").status_code == 302


def test_a_cookie_stops_counting_when_the_password_changes(make_user, limits):
    owner = make_user("owner")
    thief = Client()
    log_in(thief, PASSWORD, "10.8.0.8")  # a browser that knew the old password
    owner.set_password(NEW_PASSWORD)  # the settings form, the reset link, the admin: one save
    owner.save()
    home = Client()
    log_in(home, NEW_PASSWORD, "10.8.0.9")  # a cookie issued after the change
    spend_the_untrusted_budget(limits)
    guess = log_in(thief, "a-guess", "10.8.0.8")
    assert guess.status_code == 429 and "browsers it has not logged in from" in guess.content.decode()
    assert log_in(home, NEW_PASSWORD, "10.8.0.9").status_code == 302


def test_a_cookie_of_an_erased_account_does_not_count_for_a_newcomer_of_that_name(make_user, limits):
    old = make_user("owner")
    browser = Client()
    log_in(browser, PASSWORD, "10.8.0.10")
    old.delete()  # erased: the name is free
    make_user("owner")  # the same name and password, another account
    spend_the_untrusted_budget(limits)
    assert log_in(browser, PASSWORD, "10.8.0.10").status_code == 429


def test_a_cookie_stops_counting_when_the_account_asks_for_its_deletion(make_user, limits):
    from social.account.services import account_delete_request

    owner = make_user("owner")
    browser = Client()
    log_in(browser, PASSWORD, "10.8.0.11")
    owner.refresh_from_db()
    version_before = device_version(owner)
    account_delete_request(user=owner, password=PASSWORD, address="10.8.0.11")
    owner.refresh_from_db()
    assert device_version(owner) != version_before  # its cookies count for nothing now
