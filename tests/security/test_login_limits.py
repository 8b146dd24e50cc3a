"""Log-in guessing limits (project/identity/login_limits.py) on the log-in page, the admin log-in and the token API.

A success clears only that account's failures from that address; nobody can lock
the owner out of a browser they logged in from (its device cookie); guesses at one
account from many addresses share one untrusted budget; the owner is told in their inbox.
"""

from concurrent.futures import ThreadPoolExecutor

import pytest
from rest_framework.test import APIClient

from notifications.feed.selectors import feed_entries_list, feed_read
from project.errors import LockedOut
from project.identity.login_limits import login_attempt_begin

pytestmark = pytest.mark.django_db

PASSWORD = "pw-Secret-123"
PATHS = ["/api/auth/token/", "/accounts/login/", "/admin/login/"]


@pytest.fixture(autouse=True)
def _clock_stands_still(manual_clock):
    """Every test here on the manual clock: no window ends mid-test."""


def attempt(api, path, username, password, address):
    """One log-in attempt; the status: 200/302 in, 400/200 refused credentials, 429 limited."""
    if path.startswith("/api/"):
        return api.post(path, {"username": username, "password": password}, format="json", REMOTE_ADDR=address)
    api.logout()
    return api.post(path, {"username": username, "password": password}, REMOTE_ADDR=address)


def attempt_keeping_cookies(client, path, username, password, address):
    """A log-in from a browser that keeps its cookies (its device cookie) and logs out after."""
    if path.startswith("/api/"):
        return client.post(path, {"username": username, "password": password}, format="json", REMOTE_ADDR=address)
    answer = client.post(path, {"username": username, "password": password}, REMOTE_ADDR=address)
    client.post("/accounts/logout/", REMOTE_ADDR=address)  # the session ends; the device cookie stays
    return answer


def succeeded(answer) -> bool:
    return answer.status_code in (200, 302) and (answer.status_code == 302 or "token" in answer.json())


@pytest.mark.parametrize("path", PATHS)
def test_a_log_in_to_another_account_does_not_reset_the_guesses(api, make_user, limits, path):
    make_user("victim", is_staff=True)
    make_user("attacker", is_staff=True)
    for _ in range(2):
        assert attempt(api, path, "victim", "wrong", "10.0.0.1").status_code in (200, 400)
        assert succeeded(attempt(api, path, "attacker", PASSWORD, "10.0.0.1"))
    assert attempt(api, path, "victim", "wrong", "10.0.0.1").status_code in (200, 400)  # the third
    refused = attempt(api, path, "victim", PASSWORD, "10.0.0.1")
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0


def test_a_page_log_in_does_not_wipe_token_guesses(api, client, make_user, limits):
    make_user("victim")
    make_user("attacker")
    for _ in range(3):
        attempt(api, "/api/auth/token/", "victim", "wrong", "10.0.0.2")
        client.post("/accounts/signup/", {})  # noise
        assert (
            client.post(
                "/accounts/login/", {"username": "attacker", "password": PASSWORD}, REMOTE_ADDR="10.0.0.2"
            ).status_code
            == 302
        )
    assert attempt(api, "/api/auth/token/", "victim", PASSWORD, "10.0.0.2").status_code == 429


def test_the_owners_success_clears_only_their_own_failures_from_that_address(api, make_user, limits):
    make_user("owner")
    make_user("other")
    for _ in range(2):
        attempt(api, "/api/auth/token/", "owner", "wrong", "10.0.0.3")
        attempt(api, "/api/auth/token/", "other", "wrong", "10.0.0.3")
    assert succeeded(attempt(api, "/api/auth/token/", "owner", PASSWORD, "10.0.0.3"))
    for _ in range(2):  # the owner's slate is clean again...
        assert attempt(api, "/api/auth/token/", "owner", "wrong", "10.0.0.3").status_code == 400
    attempt(api, "/api/auth/token/", "other", "wrong", "10.0.0.3")  # ...the other account's is not
    assert attempt(api, "/api/auth/token/", "other", PASSWORD, "10.0.0.3").status_code == 429


@pytest.mark.parametrize("path", PATHS)
def test_nobody_can_lock_the_owner_out_of_their_own_browser(api, make_user, limits, manual_clock, path):
    make_user("boss", is_staff=True)
    owner = APIClient()  # the owner's browser (or API client): it logged in before, so it holds the device cookie
    assert succeeded(attempt_keeping_cookies(owner, path, "boss", PASSWORD, "10.9.9.9"))
    for n in range(12):  # more than every limit, one guess from each of 12 addresses
        attempt(api, path, "boss", "wrong", f"10.1.0.{n}")
    assert attempt(api, path, "boss", PASSWORD, "10.9.9.9").status_code == 429  # a new browser, even at home
    assert succeeded(attempt_keeping_cookies(owner, path, "boss", PASSWORD, "10.9.9.9"))  # the owner's own


def test_guessing_one_account_from_many_addresses_shares_one_budget(api, make_user, limits, settings, manual_clock):
    make_user("target")
    checked = 0
    for _ in range(6):
        for n in range(4):
            answer = attempt(api, "/api/auth/token/", "target", "wrong", f"10.2.0.{n}")
            checked += answer.status_code == 400
        manual_clock.advance(1)
    assert checked == settings.LOGIN_UNTRUSTED_FAILURES  # 6 of 24, however many addresses
    refused = attempt(api, "/api/auth/token/", "target", PASSWORD, "10.2.9.9")  # even the right password
    assert refused.status_code == 429 and refused.json()["code"] == "locked_out"
    assert "reset your password" in refused.json()["detail"]
    manual_clock.advance(int(refused.headers["Retry-After"]))
    assert succeeded(attempt(api, "/api/auth/token/", "target", PASSWORD, "10.2.9.9"))


def test_an_address_guessing_many_accounts_is_locked(api, make_user, limits):
    make_user("gina")
    for n in range(8):
        attempt(api, "/api/auth/token/", f"nobody{n}", "wrong", "10.0.0.7")
    assert attempt(api, "/api/auth/token/", "gina", PASSWORD, "10.0.0.7").status_code == 429
    assert succeeded(attempt(api, "/api/auth/token/", "gina", PASSWORD, "10.0.0.8"))


def test_forwarded_header_does_not_escape_the_address_limit(api, make_user, limits):
    make_user("hank")
    for n in range(8):
        api.post(
            "/api/auth/token/",
            {"username": f"x{n}", "password": "wrong"},
            format="json",
            REMOTE_ADDR="10.0.0.5",
            HTTP_X_FORWARDED_FOR=f"7.7.7.{n}",
        )
    assert attempt(api, "/api/auth/token/", "hank", PASSWORD, "10.0.0.5").status_code == 429


def test_usernames_in_other_cases_count_as_one_account(api, make_user, limits):
    make_user("Mixed")
    for name in ("mixed", "MIXED", "mIxEd"):
        attempt(api, "/api/auth/token/", name, "wrong", "10.0.0.9")
    assert attempt(api, "/api/auth/token/", "Mixed", PASSWORD, "10.0.0.9").status_code == 429


def test_the_owner_is_told_once_in_their_inbox(api, make_user, limits):
    owner = make_user("told")
    for n in range(6):
        attempt(api, "/api/auth/token/", "told", "wrong", f"10.3.0.{n}")
    notices = [entry for entry in feed_read(user_id=str(owner.pk)).entries if entry.kind == "notice"]
    assert len(notices) == 1
    assert notices[0].title == "Someone tried to log in to your account" and not notices[0].read
    assert "log-in" not in notices[0].body  # stored as a kind of text and its counts, in no language
    inbox = api.as_user(owner).get("/api/notifications/").json()
    [notice] = [entry for entry in feed_entries_list(user_id=str(owner.pk)).results if entry.kind == "notice"]
    assert notice.body.startswith("3 log-ins with a wrong password or code today, from 3 networks.")
    assert inbox["unread_count"] == 1
    assert any("log in to your account" in item["text"] for item in inbox["results"])


def test_concurrent_guesses_get_no_more_than_the_limit(limits):
    def guess(_):
        try:
            login_attempt_begin(username="burst", address="10.4.4.4")
        except LockedOut:
            return False
        return True

    with ThreadPoolExecutor(8) as pool:
        checked = sum(pool.map(guess, range(24)))
    assert checked == 3


def test_a_successful_login_is_not_limited(client, make_user, limits):
    make_user("judy")
    client.post("/accounts/login/", {"username": "judy", "password": "wrong"}, REMOTE_ADDR="10.0.0.1")
    answer = client.post("/accounts/login/", {"username": "judy", "password": PASSWORD}, REMOTE_ADDR="10.0.0.1")
    assert answer.status_code == 302


def test_an_operator_can_unlock_an_account_and_an_address(api, make_user, limits):
    from django.core.management import call_command

    make_user("locked")
    for _ in range(4):
        attempt(api, "/api/auth/token/", "locked", "wrong", "10.6.0.1")
    assert attempt(api, "/api/auth/token/", "locked", PASSWORD, "10.6.0.1").status_code == 429
    call_command("login_unlock", "locked", "--address", "10.6.0.1")
    from project.limits.store import limits_forget_memory

    limits_forget_memory()  # a web process asks DynamoDB again within a minute
    assert succeeded(attempt(api, "/api/auth/token/", "locked", PASSWORD, "10.6.0.1"))
