"""Every form of a name that logs in as one account counts as that account's failed log-ins:
surrounding spaces and tabs, any case, full-width letters (project/identity/login_limits.account_name)."""

import pytest

pytestmark = pytest.mark.django_db

PASSWORD = "pw-Secret-123"


def full_width(text: str) -> str:
    return "".join(chr(ord(letter) + 0xFEE0) for letter in text)


FORMS = [" " + full_width("victim"), full_width("VICTIM") + "\t", full_width("V") + "ictim "]


@pytest.fixture(autouse=True)
def _clock_stands_still(manual_clock):
    """No window ends mid-test."""


@pytest.mark.parametrize("path", ["/api/auth/token/", "/accounts/login/"])
def test_every_form_of_the_name_logs_in_as_the_account(api, make_user, limits, path):
    make_user("victim")
    for form in FORMS:
        api.logout()
        answer = api.post(path, {"username": form, "password": PASSWORD}, REMOTE_ADDR="10.9.0.1")
        assert answer.status_code in (200, 302), form
        assert answer.status_code == 302 or "token" in answer.json()


@pytest.mark.parametrize("path", ["/api/auth/token/", "/accounts/login/"])
def test_failures_typed_in_other_forms_count_as_the_accounts(api, make_user, limits, path):
    make_user("victim")
    for form in FORMS:  # LOGIN_FAILURE_LIMIT (3) failures from one address, each typed differently
        api.logout()
        assert api.post(path, {"username": form, "password": "wrong"}, REMOTE_ADDR="10.9.0.2").status_code in (200, 400)
    api.logout()
    refused = api.post(path, {"username": "victim", "password": PASSWORD}, REMOTE_ADDR="10.9.0.2")
    assert refused.status_code == 429
