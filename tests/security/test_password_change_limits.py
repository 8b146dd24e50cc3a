"""The password-change page checks the current password inside the log-in limits: each wrong
one counts as a failed log-in of the account from that address (the same budget, the same
owner's notice), and once that budget is spent the page answers 429 and changes nothing."""

import pytest
from django.test import Client

from notifications.feed.selectors import feed_read

pytestmark = pytest.mark.django_db

PASSWORD = "pw-Secret-123"
NEW_PASSWORD = "a-fresh-Passw0rd"
ADDRESS = "10.7.0.1"


@pytest.fixture(autouse=True)
def _clock_stands_still(manual_clock):
    """Every test here on the manual clock: no window ends mid-test."""


@pytest.fixture
def owner(make_user):
    return make_user("owner")


@pytest.fixture
def browser(owner):
    browser = Client()
    browser.force_login(owner)
    return browser


def change(browser: Client, old: str):
    return browser.post(
        "/accounts/password/change/",
        {"old_password": old, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
        REMOTE_ADDR=ADDRESS,
    )


def test_wrong_current_passwords_spend_the_log_in_budget_then_the_page_refuses(browser, owner, limits):
    for _ in range(3):
        wrong = change(browser, "wrong")
        assert wrong.status_code == 200 and "errorlist" in wrong.content.decode()
    refused = change(browser, PASSWORD)  # even the right one is not checked now
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    page = refused.content.decode()
    assert "Too many failed log-ins for this account from your network." in page
    assert 'name="old_password"' in page  # the form is still there for later
    owner.refresh_from_db()
    assert owner.check_password(PASSWORD)
    assert browser.get("/me/settings/").status_code == 200  # still logged in


def test_the_page_and_the_log_in_share_one_budget(browser, api, owner, limits):
    change(browser, "wrong")
    change(browser, "wrong")
    token = api.post("/api/auth/token/", {"username": "owner", "password": "wrong"}, format="json", REMOTE_ADDR=ADDRESS)
    assert token.status_code == 400
    refused = api.post(
        "/api/auth/token/", {"username": "OWNER", "password": PASSWORD}, format="json", REMOTE_ADDR=ADDRESS
    )
    assert refused.status_code == 429


def test_the_right_password_clears_this_addresss_failures(browser, owner, limits):
    change(browser, "wrong")
    change(browser, "wrong")
    assert change(browser, PASSWORD).status_code == 302  # the third attempt, the last the window allows
    assert change(browser, "wrong").status_code == 200  # checked: the success cleared the two
    changed_back = browser.post(
        "/accounts/password/change/",
        {"old_password": NEW_PASSWORD, "new_password1": PASSWORD, "new_password2": PASSWORD},
        REMOTE_ADDR=ADDRESS,
    )
    assert changed_back.status_code == 302


def test_the_owner_is_told_of_wrong_current_passwords(browser, owner, limits):
    for _ in range(3):
        change(browser, "wrong")
    notices = [entry for entry in feed_read(user_id=str(owner.pk)).entries if entry.kind == "notice"]
    assert len(notices) == 1
