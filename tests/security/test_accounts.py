"""Usernames unique regardless of case (in the database), no look-alikes, no trust in X-Forwarded-For."""

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, transaction
from django.test import RequestFactory

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


def test_one_trusted_proxy_takes_the_address_it_saw(settings):
    settings.NUM_PROXIES = 1
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="6.6.6.6, 1.2.3.4")
    assert client_ip(request) == "1.2.3.4"


# --- log-in guessing (more in test_login_limits.py) ---------------------------


def test_the_test_client_login_still_works(client, make_user):
    make_user("kate")
    assert client.login(username="kate", password=PASSWORD)
