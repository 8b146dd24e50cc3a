"""Server-rendered pages: timeline, comment page, like buttons without JavaScript, sign-up."""

import re

import pytest
from django.core.management import call_command

from actions.comments import comment_create
from social import services
from social.models import Like

pytestmark = pytest.mark.django_db


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


def test_sign_up_form_has_labels_and_shows_errors_next_to_the_field(client, make_user):
    make_user("taken")
    page = client.get("/accounts/signup/").content.decode()
    assert '<label for="id_username">' in page and '<label for="id_password1">' in page
    assert 'class="primary">Create account</button>' in page
    answer = client.post(
        "/accounts/signup/",
        {"username": "taken", "display_name": "", "password1": "a-long-passw0rd", "password2": "a-long-passw0rd"},
    )
    text = answer.content.decode()
    field = re.search(r'<div class="field has-error">(.*?)</div>', text, re.S).group(1)
    assert '<label for="id_username">' in field and "errorlist" in field
    assert 'aria-invalid="true"' in field and 'name="username"' in field


def test_log_in_form_has_labels_a_primary_button_and_keeps_next(client):
    page = client.get("/accounts/login/?next=/popular/").content.decode()
    assert '<label for="id_username">' in page and '<label for="id_password">' in page
    assert 'class="primary">Log in</button>' in page
    assert 'name="next" value="/popular/"' in page
    answer = client.post("/accounts/login/", {"username": "nobody", "password": "wrong"})
    assert 'class="form-error"' in answer.content.decode()


def test_timestamp_links_to_the_comment_and_carries_a_machine_readable_time(client, alice):
    comment = comment_create(author_id=str(alice.pk), body="When?")
    text = client.get("/").content.decode()
    link = re.search(rf'<a class="when" href="/c/{comment.comment_id}/"><time datetime="[^"]+"', text)
    assert link


def test_popular_shows_the_like_count_once_and_views_totals(client, alice, make_user):
    comment = comment_create(author_id=str(alice.pk), body="Liked a lot")
    client.force_login(make_user("bob"))
    client.post(f"/c/{comment.comment_id}/like/", {"action": "like", "next": "/"})
    call_command("aggregate_counters", verbosity=0)
    text = client.get("/popular/").content.decode()
    assert "Liked a lot" in text
    assert f'data-like-count="{comment.comment_id}">1<' in text
    assert "1 like" not in text and "1 likes" not in text
    assert re.search(r'<p class="rank"><strong>#1</strong></p>', text)


def test_anonymous_comment_page_offers_log_in_to_reply(client, alice):
    comment = comment_create(author_id=str(alice.pk), body="Reply to me")
    text = client.get(f"/c/{comment.comment_id}/").content.decode()
    assert 'name="body"' not in text
    assert f'href="/accounts/login/?next=/c/{comment.comment_id}/">Log in to reply</a>' in text


def test_liking_a_comment_hidden_meanwhile_goes_back_and_says_why(client, alice, make_user):
    parent = comment_create(author_id=str(alice.pk), body="The parent")
    reply = comment_create(author_id=str(alice.pk), body="Soon hidden", parent_id=parent.comment_id)
    services.comment_set_hidden(comment_id=reply.comment_id, hidden=True)
    client.force_login(make_user("bob"))
    answer = client.post(f"/c/{reply.comment_id}/like/", {"action": "like", "next": f"/c/{parent.comment_id}/"})
    assert answer.status_code == 302
    assert answer["Location"] == f"/c/{parent.comment_id}/"
    text = client.get(answer["Location"]).content.decode()
    assert "no longer available" in text and "Soon hidden" not in text
    assert list(Like.query(reply.comment_id)) == []


def test_liking_a_hidden_comment_from_its_own_page_goes_to_the_timeline(client, alice, make_user):
    comment = comment_create(author_id=str(alice.pk), body="Soon hidden")
    services.comment_set_hidden(comment_id=comment.comment_id, hidden=True)
    client.force_login(make_user("bob"))
    answer = client.post(f"/c/{comment.comment_id}/like/", {"action": "unlike", "next": f"/c/{comment.comment_id}/"})
    assert answer["Location"] == "/"
    assert "no longer available" in client.get("/").content.decode()


def test_the_like_api_still_answers_404_json_for_a_hidden_comment(client, alice):
    comment = comment_create(author_id=str(alice.pk), body="Soon hidden")
    services.comment_set_hidden(comment_id=comment.comment_id, hidden=True)
    client.force_login(alice)
    answer = client.put(f"/api/comments/{comment.comment_id}/like/")
    assert answer.status_code == 404
    assert answer["Content-Type"].startswith("application/json")


def test_the_author_of_a_hidden_comment_is_told_it_is_hidden_others_get_404(client, alice, make_user):
    comment = comment_create(author_id=str(alice.pk), body="My hidden words")
    services.comment_set_hidden(comment_id=comment.comment_id, hidden=True)
    client.force_login(alice)
    page = client.get(f"/c/{comment.comment_id}/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "Your comment is hidden" in text and "My hidden words" in text
    assert "like-form" not in text and 'name="body"' not in text
    client.force_login(make_user("bob"))
    assert client.get(f"/c/{comment.comment_id}/").status_code == 404
    client.logout()
    assert client.get(f"/c/{comment.comment_id}/").status_code == 404
