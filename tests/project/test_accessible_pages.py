"""Pages screen readers can use (the accessibility findings checked on the HTML)."""

import re

import pytest

from actions.comments import comment_create

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def signed_in(client, make_user):
    user = make_user("reader", display_name="Reader")
    client.force_login(user)
    return user


def test_timeline_and_comment_pages_have_a_heading(client, signed_in):
    comment = comment_create(author_id=str(signed_in.pk), body="Hello")
    assert re.search(r"<h1[^>]*>Timeline</h1>", client.get("/").content.decode())
    assert re.search(r"<h1[^>]*>Comment by Reader</h1>", client.get(f"/c/{comment.comment_id}/").content.decode())


def test_like_buttons_say_like_and_likes_and_the_heart_is_not_read(client, signed_in):
    comment_create(author_id=str(signed_in.pk), body="Hello")
    page = client.get("/").content.decode()
    button = re.search(r'<button[^>]*class="like[^"]*"[^>]*>(.*?)</button>', page, re.S).group(1)
    assert '<span class="heart" aria-hidden="true">' in button
    name = "Like Reader\N{RIGHT SINGLE QUOTATION MARK}s comment,"
    assert f'<span class="visually-hidden">{name}</span>' in button and "likes</span>" in button


def test_the_badge_carries_its_number_and_says_unread(client, signed_in):
    page = client.get("/").content.decode()
    badge = re.search(r'<span class="badge"[^>]*>(.*?)</span></span>', page, re.S)
    assert badge and "aria-label" not in badge.group(0)
    assert badge.group(1).startswith("0") and "unread" in badge.group(1)
