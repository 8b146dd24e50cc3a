"""Server-rendered pages: timeline, comment page, like buttons without JavaScript, sign-up."""

import pytest

from actions.comments import comment_create
from social import services
from social.models import Like

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(make_user):
    return make_user("alice", display_name="Alice")


def test_anonymous_visitor_sees_the_timeline_and_an_invitation(client, alice):
    comment_create(author_id=str(alice.pk), body="Hello from Alice")
    page = client.get("/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "Hello from Alice" in text
    assert "Log in" in text
    assert "like-form" not in text


def test_signed_in_user_posts_from_the_timeline(client, alice):
    client.force_login(alice)
    answer = client.post("/", {"body": "Posted from the form"})
    assert answer.status_code == 302
    text = client.get("/").content.decode()
    assert "Posted from the form" in text
    assert "Signed in as" in text and "Alice" in text


def test_an_empty_post_shows_the_error_and_posts_nothing(client, alice):
    client.force_login(alice)
    answer = client.post("/", {"body": "x" * 2001})
    assert answer.status_code == 200
    assert "errorlist" in answer.content.decode()
    assert answer.context["page"].results == []


def test_anonymous_post_goes_to_login(client):
    answer = client.post("/", {"body": "hi"})
    assert answer.status_code == 302
    assert "/accounts/login/" in answer["Location"]


def test_like_button_works_without_javascript(client, alice, make_user):
    bob = make_user("bob")
    comment = comment_create(author_id=str(alice.pk), body="Like me")
    client.force_login(bob)
    answer = client.post(f"/c/{comment.comment_id}/like/", {"action": "like", "next": "/"})
    assert answer.status_code == 302
    assert answer["Location"] == f"/#c-{comment.comment_id}"
    assert [like.user_id for like in Like.query(comment.comment_id)] == [str(bob.pk)]
    text = client.get("/").content.decode()
    assert 'value="unlike"' in text
    assert f'class="count" data-like-count="{comment.comment_id}">1<' in text
    client.post(f"/c/{comment.comment_id}/like/", {"action": "unlike", "next": "/"})
    assert list(Like.query(comment.comment_id)) == []


def test_like_form_refuses_foreign_redirects(client, alice):
    comment = comment_create(author_id=str(alice.pk), body="Like me")
    client.force_login(alice)
    answer = client.post(f"/c/{comment.comment_id}/like/", {"action": "like", "next": "https://evil.example/"})
    assert answer["Location"].startswith("/")


def test_like_form_for_unknown_comment_is_404(client, alice):
    client.force_login(alice)
    assert client.post("/c/00000000-0000-0000-0000-000000000000/like/", {"action": "like"}).status_code == 404
    assert client.get("/c/00000000-0000-0000-0000-000000000000/").status_code == 404


def test_comment_page_shows_replies_and_takes_a_reply(client, alice, make_user):
    bob = make_user("bob", display_name="Bob")
    comment = comment_create(author_id=str(alice.pk), body="The question")
    client.force_login(bob)
    answer = client.post(f"/c/{comment.comment_id}/", {"body": "The answer"})
    assert answer.status_code == 302
    text = client.get(f"/c/{comment.comment_id}/").content.decode()
    assert "The question" in text and "The answer" in text


def test_hidden_comment_page_is_404(client, alice):
    comment = comment_create(author_id=str(alice.pk), body="Secret")
    services.comment_set_hidden(comment_id=comment.comment_id, hidden=True)
    assert client.get(f"/c/{comment.comment_id}/").status_code == 404
    assert "Secret" not in client.get("/").content.decode()


def test_a_mangled_cursor_starts_over(client, alice):
    comment_create(author_id=str(alice.pk), body="Still here")
    assert "Still here" in client.get("/?cursor=%%%").content.decode()


def test_sign_up_log_out_and_log_in(client, django_user_model):
    answer = client.post(
        "/accounts/signup/",
        {"username": "zoe", "display_name": "Zoe", "password1": "a-long-passw0rd", "password2": "a-long-passw0rd"},
    )
    assert answer.status_code == 302
    assert "Zoe" in client.get("/").content.decode()
    client.post("/accounts/logout/")
    assert "Log in" in client.get("/").content.decode()
    answer = client.post("/accounts/login/", {"username": "zoe", "password": "a-long-passw0rd"})
    assert answer.status_code == 302
    assert django_user_model.objects.get(username="zoe").display_name == "Zoe"
