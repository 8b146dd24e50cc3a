"""Usernames unique regardless of case (in the database), no look-alikes, no trust in X-Forwarded-For."""

import threading

import pytest
from django.contrib.auth import get_user_model
from django.db import IntegrityError, connection, connections, transaction
from django.test import RequestFactory
from rest_framework.test import APIClient

from project.errors import ApplicationError
from project.http.security import client_ip
from project.testing.harness import WAIT_SECONDS, in_threads, wait_for
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


# --- the race on PostgreSQL, with real connections ------------------------------


def _sign_up_in_thread(name: str):
    """A sign-up through the API on this thread's own database connection."""
    try:
        return APIClient().post("/api/users/", {"username": name, "password": PASSWORD}, format="json")
    finally:
        connections.close_all()


@pytest.mark.django_db(transaction=True)
def test_sign_ups_racing_one_not_yet_committed_wait_for_it_and_get_a_400(django_user_model):
    """The first sign-up's INSERT is in, its transaction not yet committed: the others each pass
    the "is it taken?" check (they cannot see it), insert, wait on the case-insensitive unique
    index until the first commits, and then lose with a 400."""
    inserted, commit = threading.Event(), threading.Event()

    def first():
        try:
            with transaction.atomic():
                django_user_model.objects.create_user(username="zoe", password=PASSWORD)
                inserted.set()
                commit.wait(WAIT_SECONDS)
        finally:
            connections.close_all()

    names = ["Zoe", "ZOE", "zOe", "zoE"]
    answers = []
    winner = threading.Thread(target=first)
    winner.start()
    racers = threading.Thread(target=lambda: answers.extend(in_threads(lambda n: _sign_up_in_thread(names[n]), 4)))
    try:
        assert inserted.wait(WAIT_SECONDS)
        racers.start()

        def waiting_for_the_first() -> int:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT%'"
                )
                return cursor.fetchone()[0]

        wait_for(lambda: waiting_for_the_first() == len(names), what="every racer waiting on the first's insert")
    finally:
        commit.set()
        winner.join(WAIT_SECONDS)
        racers.join(WAIT_SECONDS)
    assert [answer.status_code for answer in answers] == [400] * len(names)
    assert all(answer.json()["username"] == ["This username is taken."] for answer in answers)
    assert list(django_user_model.objects.values_list("username", flat=True)) == ["zoe"]


@pytest.mark.django_db(transaction=True)
def test_sign_ups_at_once_for_one_name_in_any_case_admit_exactly_one(django_user_model):
    names = ["kim", "Kim", "KIM", "kIm", "kiM", "KIm"]

    def sign_up(n: int):
        try:
            return services.user_create(username=names[n], password=PASSWORD)
        except ApplicationError as error:
            return error
        finally:
            connections.close_all()

    results = in_threads(sign_up, len(names))
    created = [result for result in results if not isinstance(result, ApplicationError)]
    refused = [result for result in results if isinstance(result, ApplicationError)]
    assert len(created) == 1 and len(refused) == len(names) - 1
    assert {error.field for error in refused} == {"username"}
    assert list(django_user_model.objects.values_list("username", flat=True)) == [created[0].username]
