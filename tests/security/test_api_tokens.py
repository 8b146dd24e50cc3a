"""API tokens end: a password change or reset revokes every token of the account and ends
its other sessions, DELETE /api/auth/token/ logs a client out, and a token older than
API_TOKEN_MAX_AGE_DAYS answers 401 until the next log-in issues a new one."""

import re
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.notifications.mail_helpers import mailed

pytestmark = pytest.mark.django_db

PASSWORD = "pw-Secret-123"
NEW_PASSWORD = "a-fresh-Passw0rd"


@pytest.fixture
def alice(make_user):
    user = make_user("alice")
    user.email, user.email_verified = "alice@example.com", True  # a reset mails verified addresses only
    user.save()
    return user


def log_in(username: str = "alice", password: str = PASSWORD) -> str:
    answer = APIClient().post("/api/auth/token/", {"username": username, "password": password}, format="json")
    assert answer.status_code == 200, answer.content
    return answer.json()["token"]


def me(token: str):
    return APIClient().get("/api/me/", HTTP_AUTHORIZATION=f"Token {token}")


def browser_logged_in(user) -> Client:
    browser = Client()
    assert browser.post("/accounts/login/", {"username": user.username, "password": PASSWORD}).status_code == 302
    assert browser.get("/me/settings/").status_code == 200
    return browser


def change_password(browser: Client, old: str = PASSWORD):
    return browser.post(
        "/accounts/password/change/",
        {"old_password": old, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )


def test_a_password_change_revokes_the_tokens_and_other_sessions_but_keeps_this_one(alice):
    token = log_in()
    assert me(token).status_code == 200
    here, elsewhere = browser_logged_in(alice), browser_logged_in(alice)
    assert change_password(here).status_code == 302
    assert me(token).status_code == 401
    assert not Token.objects.filter(user=alice).exists()
    assert here.get("/me/settings/").status_code == 200  # the browser that changed it stays in
    assert elsewhere.get("/me/settings/").status_code == 302  # every other session is logged out
    assert elsewhere.get("/api/me/").status_code in (401, 403)
    fresh = log_in(password=NEW_PASSWORD)
    assert fresh != token and me(fresh).status_code == 200


def test_a_password_reset_revokes_the_tokens_and_every_session(alice):
    token = log_in()
    elsewhere = browser_logged_in(alice)
    anonymous = Client()
    anonymous.post("/accounts/password/reset/", {"email": "alice@example.com"})
    [message] = mailed()
    found = re.search(r"https?://[^/\s]+(/accounts/password/reset/\S+/)", str(message.body))
    assert found is not None
    form_url = anonymous.get(found.group(1), follow=True).redirect_chain[-1][0]
    done = anonymous.post(form_url, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert done.status_code == 302
    assert me(token).status_code == 401
    assert elsewhere.get("/me/settings/").status_code == 302


def test_a_password_set_anywhere_revokes_the_tokens(alice):
    """The admin's and `changepassword`'s way too: every save of a new password."""
    token = log_in()
    alice.set_password(NEW_PASSWORD)
    alice.save()
    assert me(token).status_code == 401


def test_logging_in_again_does_not_revoke_a_token_nor_a_hash_upgrade(alice):
    token = log_in()
    assert log_in() == token  # a second client of the same person shares it until it ends
    alice.save()  # a save without a new password (display name, last log-in)
    assert me(token).status_code == 200


def test_delete_logs_this_client_out(alice):
    token = log_in()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.delete("/api/auth/token/").status_code == 204
    revoked = me(token)
    assert revoked.status_code == 401
    assert revoked.json() == {"detail": "Invalid token.", "code": "authentication_failed"}
    again = client.delete("/api/auth/token/")
    assert again.status_code == 401 and again.json()["code"]
    assert log_in() != token


def test_delete_without_a_token_is_401(alice):
    assert APIClient().delete("/api/auth/token/").status_code == 401
    browser = APIClient()
    browser.force_login(alice)  # a browser session has no token to delete
    answer = browser.delete("/api/auth/token/")
    assert answer.status_code == 401 and answer.json()["code"] == "not_authenticated"


def test_an_expired_token_is_401_and_the_next_log_in_issues_a_new_one(alice, settings):
    settings.API_TOKEN_MAX_AGE_DAYS = 30
    token = log_in()
    Token.objects.filter(key=token).update(created=timezone.now() - timedelta(days=29, hours=23))
    assert me(token).status_code == 200
    Token.objects.filter(key=token).update(created=timezone.now() - timedelta(days=30, minutes=1))
    expired = me(token)
    assert expired.status_code == 401
    assert expired.json() == {
        "detail": "This token has expired: log in again (POST /api/auth/token/) for a new one.",
        "code": "token_expired",
    }
    assert "WWW-Authenticate" in expired.headers
    fresh = log_in()
    assert fresh != token and me(fresh).status_code == 200


def test_tokens_never_expire_with_a_max_age_of_0(alice, settings):
    settings.API_TOKEN_MAX_AGE_DAYS = 0
    token = log_in()
    Token.objects.filter(key=token).update(created=timezone.now() - timedelta(days=3650))
    assert me(token).status_code == 200
    assert log_in() == token


def test_a_negative_max_age_stops_manage_py(settings):
    from django.core.management import call_command
    from django.core.management.base import SystemCheckError

    call_command("check")
    settings.API_TOKEN_MAX_AGE_DAYS = -1
    with pytest.raises(SystemCheckError, match="API_TOKEN_MAX_AGE_DAYS"):
        call_command("check")


def test_a_token_answers_for_its_own_account_and_stops_when_the_account_is_deactivated(alice, make_user):
    token, other = log_in(), make_user("bob")
    answer = me(token)
    assert answer.status_code == 200 and answer.json()["username"] == "alice"
    other.is_active = False
    other.save()
    assert me(token).status_code == 200
    alice.is_active = False
    alice.save()
    refused = me(token)
    assert refused.status_code == 401
    assert refused.json() == {"detail": "User inactive or deleted.", "code": "authentication_failed"}
