"""What pages say is true: a 404 blames a removed comment only at a comment's address, the
log-in error says what matches in any case, a log-out says so, and sign-up and Settings say the
same of the e-mail address."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


def test_a_404_elsewhere_blames_no_comment(client):
    page = client.get("/no/such/page/").content.decode()
    assert "Page not found" in page
    assert "comment" not in page.split("<main", 1)[1].split("</main>")[0]


def test_a_missing_comment_says_it_may_have_been_removed(client):
    page = client.get("/c/00000000-0000-0000-0000-000000000000/").content.decode()
    assert "the comment may have been removed" in page


def test_the_log_in_error_says_only_the_password_counts_capitals(client, make_user):
    make_user("alice")
    page = client.post("/accounts/login/", {"username": "alice", "password": "wrong"}).content.decode()
    assert "both fields may be case-sensitive" not in page
    assert "capitals count" in page
    assert client.post("/accounts/login/", {"username": "ALICE", "password": "pw-Secret-123"}).status_code == 302


def test_a_log_out_says_so(client, make_user):
    client.force_login(make_user("alice"))
    answer = client.post("/accounts/logout/", follow=True)
    assert "You are logged out." in answer.content.decode()
    assert "_auth_user_id" not in client.session


def test_sign_up_and_settings_say_the_same_of_the_address(client, make_user):
    signup = client.get("/accounts/signup/").content.decode()
    assert "only to reset your password" not in signup
    assert "For the notification e-mail you choose and password resets" in signup.replace("for the", "For the")
    client.force_login(make_user("alice"))
    assert "For the notification e-mail you choose and password resets" in client.get("/me/settings/").content.decode()


def test_a_refused_sign_up_opens_on_its_first_field_in_error(client, settings):
    settings.SIGNUP_OPEN = True
    answer = client.post(
        "/accounts/signup/", {"username": "newcomer", "password1": "pw-Secret-123", "password2": "another-one-456"}
    )
    page = answer.content.decode()
    assert answer.status_code == 200 and page.count("autofocus") == 1
    before, after = page.split('name="password2"', 1)
    assert "autofocus" in before.rsplit("<input", 1)[1] + after.split(">", 1)[0]
