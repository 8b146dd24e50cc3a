"""Issue 12: usernames unique regardless of case (in the database), no look-alikes,
log-in guessing limited per account and per address, no trust in X-Forwarded-For."""

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.test import RequestFactory
from rest_framework.throttling import AnonRateThrottle

from project.errors import ApplicationError
from project.security import client_ip
from social import services
from social.apis import UserCreateApi
from social.views import SignUpForm

pytestmark = pytest.mark.django_db

PASSWORD = "pw-Secret-123"


def test_the_database_refuses_a_second_name_in_another_case(make_user):
    make_user("Bob")
    with pytest.raises(IntegrityError), transaction.atomic():
        get_user_model().objects.create_user(username="bOB", password=PASSWORD)


def test_the_loser_of_a_sign_up_race_gets_a_400_from_the_api(api, make_user, monkeypatch):
    """The race: every sign-up passed the "is it taken?" check before the winner inserted."""
    monkeypatch.setattr(UserCreateApi.InputSerializer, "validate_username", lambda self, value: value)
    make_user("bob")  # the winner
    for name in ("Bob", "BOB", "bOb"):
        answer = api.post("/api/users/", {"username": name, "password": PASSWORD}, format="json")
        assert answer.status_code == 400
        assert answer.json()["username"] == ["This username is taken."]
    assert get_user_model().objects.filter(username__iexact="bob").count() == 1


def test_the_loser_of_a_sign_up_race_gets_a_form_error_on_the_page(client, make_user, monkeypatch):
    monkeypatch.setattr(SignUpForm, "clean_username", lambda self: self.cleaned_data["username"])
    monkeypatch.setattr(get_user_model(), "validate_constraints", lambda self, exclude=None: None)
    make_user("bob")
    form = {"username": "BOB", "password1": PASSWORD, "password2": PASSWORD}
    answer = client.post("/accounts/signup/", form)
    assert answer.status_code == 200
    assert "This username is taken." in answer.content.decode()
    assert get_user_model().objects.filter(username__iexact="bob").count() == 1


def test_the_service_turns_the_race_into_a_400(make_user):
    make_user("carol")
    with pytest.raises(ApplicationError) as error:
        services.user_create(username="CAROL", password=PASSWORD)
    assert error.value.field == "username"


@pytest.mark.parametrize("name", ["b\u043eb", "\u0430lice", "bob\u200b", "b\u00f6b", "b o b"])
def test_look_alike_names_are_refused(api, client, name):
    answer = api.post("/api/users/", {"username": name, "password": PASSWORD}, format="json")
    assert answer.status_code == 400
    assert "username" in answer.json()
    page = client.post("/accounts/signup/", {"username": name, "password1": PASSWORD, "password2": PASSWORD})
    assert page.status_code == 200
    assert not get_user_model().objects.exists()


def test_a_plain_name_still_signs_up(api, client):
    assert api.post("/api/users/", {"username": "dave.k-9", "password": PASSWORD}, format="json").status_code == 201
    page = client.post("/accounts/signup/", {"username": "erin", "password1": PASSWORD, "password2": PASSWORD})
    assert page.status_code == 302


# --- client address ---------------------------------------------------------


def test_forwarded_header_is_not_trusted_by_default():
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="1.2.3.4")
    assert client_ip(request) == "10.0.0.1"
    assert AnonRateThrottle().get_ident(request) == "10.0.0.1"


def test_one_trusted_proxy_takes_the_address_it_saw(settings):
    settings.NUM_PROXIES = 1
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="6.6.6.6, 1.2.3.4")
    assert client_ip(request) == "1.2.3.4"


# --- log-in guessing ---------------------------------------------------------


@pytest.fixture
def limit(settings):
    settings.AXES_FAILURE_LIMIT = 3
    return 3


def _token(api, username, password, address="10.0.0.1"):
    return api.post(
        "/api/auth/token/", {"username": username, "password": password}, format="json", REMOTE_ADDR=address
    )


def _page_login(client, path, username, password, address="10.0.0.1"):
    return client.post(path, {"username": username, "password": password}, REMOTE_ADDR=address)


def test_token_endpoint_locks_an_account_after_failed_guesses(api, make_user, limit):
    make_user("frank")
    for _ in range(limit - 1):
        assert _token(api, "frank", "wrong").status_code == 400
    assert _token(api, "frank", "wrong").status_code == 429  # the limit-th failure locks
    # The right password from the same address no longer helps...
    locked = _token(api, "frank", PASSWORD)
    assert locked.status_code == 429
    assert locked.json()["code"] == "locked_out"
    # ...nor from another address: the account itself is limited.
    assert _token(api, "frank", PASSWORD, address="10.9.9.9").status_code == 429


def test_token_endpoint_limits_an_address_guessing_many_accounts(api, make_user, limit):
    make_user("gina")
    for i in range(limit):
        _token(api, f"nobody{i}", "wrong", address="10.0.0.7")
    assert _token(api, "gina", PASSWORD, address="10.0.0.7").status_code == 429
    assert _token(api, "gina", PASSWORD, address="10.0.0.8").status_code == 200


def test_forwarded_header_does_not_escape_the_address_limit(api, make_user, limit):
    make_user("hank")
    for i in range(limit):
        api.post(
            "/api/auth/token/",
            {"username": f"x{i}", "password": "wrong"},
            format="json",
            REMOTE_ADDR="10.0.0.5",
            HTTP_X_FORWARDED_FOR=f"7.7.7.{i}",
        )
    assert _token(api, "hank", PASSWORD, address="10.0.0.5").status_code == 429


@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/"])
def test_login_pages_lock_after_failed_guesses(client, make_user, limit, path):
    make_user("ivan", is_staff=True)
    for _ in range(limit - 1):
        assert _page_login(client, path, "ivan", "wrong").status_code == 200
    assert _page_login(client, path, "ivan", "wrong").status_code == 429
    assert _page_login(client, path, "ivan", PASSWORD).status_code == 429
    assert _page_login(client, path, "ivan", PASSWORD, address="10.3.3.3").status_code == 429


def test_a_successful_login_is_not_limited(client, make_user, limit):
    make_user("judy")
    _page_login(client, "/accounts/login/", "judy", "wrong")
    assert _page_login(client, "/accounts/login/", "judy", PASSWORD).status_code == 302


def test_the_test_client_login_still_works(client, make_user):
    make_user("kate")
    assert client.login(username="kate", password=PASSWORD)
