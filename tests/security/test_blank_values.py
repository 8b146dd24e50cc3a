"""Blank values the schema forbids are a 400 naming the field, and one password limit holds
for the sign-up page and the API."""

import pytest
from django.contrib.auth import get_user_model

from social import services

pytestmark = pytest.mark.django_db(transaction=True)


def assert_field_error(answer, field):
    assert answer.status_code == 400, answer.content[:300]
    assert field in answer.json(), answer.json()


@pytest.mark.parametrize(
    ("path", "field"),
    [
        ("/api/comments/popular/?kind=", "kind"),
        ("/api/comments/popular/?limit=", "limit"),
        ("/api/feed/?unread=", "unread"),
        ("/api/feed/?unread=%20", "unread"),
        ("/api/comments/?limit=", "limit"),
        ("/api/notifications/?limit=", "limit"),
    ],
)
def test_a_blank_query_value_is_a_400_naming_it(api, make_user, path, field):
    assert_field_error(api.as_user(make_user("ann")).get(path), field)


def test_a_blank_cursor_is_the_first_page(api, make_user):
    client = api.as_user(make_user("ann"))
    assert client.get("/api/comments/?cursor=").status_code == 200
    assert client.get("/api/notifications/?cursor=").status_code == 200


def test_an_empty_parent_id_is_a_400_not_a_top_level_comment(api, make_user):
    client = api.as_user(make_user("ann"))
    answer = client.post("/api/comments/", {"body": "hello", "parent_id": ""})  # a form body
    assert_field_error(answer, "parent_id")
    assert_field_error(client.post("/api/comments/", {"body": "hello", "parent_id": ""}, format="json"), "parent_id")
    assert client.get("/api/comments/").json()["results"] == []
    assert client.post("/api/comments/", {"body": "hello"}).status_code == 201


def test_one_password_limit_for_the_sign_up_page_and_the_api(client, api):
    too_long = "Aa1!" * (services.PASSWORD_MAX_LENGTH // 4) + "x"
    answer = api.post("/api/users/", {"username": "zoe", "password": too_long}, format="json")
    assert_field_error(answer, "password")
    for password in (too_long, "Aa1!" * 250_000):  # 129 characters, 1 MB
        page = client.post("/accounts/signup/", {"username": "zoe", "password1": password, "password2": password})
        assert page.status_code == 200
        assert f"at most {services.PASSWORD_MAX_LENGTH} characters" in page.content.decode()
    assert not get_user_model().objects.filter(username="zoe").exists()
    longest = "Aa1!" * (services.PASSWORD_MAX_LENGTH // 4)
    page = client.post("/accounts/signup/", {"username": "zoe", "password1": longest, "password2": longest})
    assert page.status_code == 302
