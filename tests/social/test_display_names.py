"""Display names keep no Unicode format character (bidi overrides and isolates, zero-width
characters), whichever way they are typed: the sign-up page, the API's sign-up, the settings
page, the API's PATCH /api/me/."""

import pytest
from django.contrib.auth import get_user_model

from social.display_names import display_name_clean, names_quoted

pytestmark = pytest.mark.django_db

# "Bob" with a right-to-left override and its pop, a zero-width space, a zero-width joiner,
# a right-to-left isolate, a byte-order mark and a tab: only "Bob X" is meant.
TYPED = "\u202eB\u200bo\u200db\u202c\u2067 \ufeffX\u2069\t"
STORED = "Bob X"


def stored(username):
    return get_user_model().objects.get(username=username).display_name


def test_the_cleaning_drops_every_format_character_and_keeps_the_letters():
    assert display_name_clean(TYPED) == STORED
    assert display_name_clean("Zoë \u05e9\u05dc\u05d5\u05dd  Ann\x07e") == "Zoë \u05e9\u05dc\u05d5\u05dd Ann e"
    assert display_name_clean("\u200e\u200f\u2066\u2068\u061c\u00ad") == ""  # marks, isolates, soft hyphen


def test_the_sign_up_page_stores_the_name_without_format_characters(client):
    answer = client.post(
        "/accounts/signup/",
        {"username": "zoe", "display_name": TYPED, "password1": "a-long-passw0rd", "password2": "a-long-passw0rd"},
    )
    assert answer.status_code == 302
    assert stored("zoe") == STORED


def test_the_api_sign_up_stores_the_name_without_format_characters(api):
    answer = api.post(
        "/api/users/", {"username": "zoe", "password": "a-long-passw0rd", "display_name": TYPED}, format="json"
    )
    assert answer.status_code == 201, answer.content
    assert stored("zoe") == STORED


def test_the_settings_page_and_the_api_store_the_name_without_format_characters(make_user, client, api):
    alice = make_user("alice", display_name="Alice")
    client.force_login(alice)
    assert client.post("/me/settings/", {"display_name": TYPED}).status_code == 302
    assert stored("alice") == STORED
    answer = api.as_user(alice).patch("/api/me/", {"display_name": "\u202eecilA"}, format="json")
    assert answer.status_code == 200 and answer.json()["display_name"] == "ecilA"
    assert stored("alice") == "ecilA"
    assert api.as_user(alice).patch("/api/me/", {"display_name": "\u200b\u200b"}, format="json").status_code == 200
    assert stored("alice") == ""  # nothing visible: the username is shown


def test_names_opening_a_subject_are_quoted_and_cleaned():
    assert names_quoted("Bob replied to your comment", ["Bob"]) == "\u201cBob\u201d replied to your comment"
    assert names_quoted("\u202eBob and Al liked your comment", ["\u202eBob", "Al"]) == (
        "\u201cBob\u201d and \u201cAl\u201d liked your comment"
    )
    assert names_quoted("Bob and 2 others liked your comment", ["Bob", "Al"]) == (
        "\u201cBob\u201d and 2 others liked your comment"
    )
