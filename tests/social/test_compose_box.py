"""The post and reply boxes: the same text sent twice from one drawn form (a page restored by
Back, pressed again) is posted once; a line break counts as one character on the server, as in
the box's counter (the browser sends CRLF), and the rule is stated under the box."""

import re

import pytest

from actions.comments import comment_create
from social import selectors, services, views

pytestmark = pytest.mark.django_db(transaction=True)


def bodies_of(user) -> list[str]:
    return [comment.body for comment in selectors.comments_by_author(author_id=str(user.pk))]


def drawn_key(client, path: str) -> str:
    page = client.get(path).content.decode()
    match = re.search(r'<input type="hidden" name="idempotency_key" value="([0-9a-f]{32})"', page)
    assert match, "the post form carries a key minted when it is drawn"
    return match.group(1)


def test_a_post_sent_again_from_the_same_drawn_form_is_not_a_duplicate(client, alice):
    client.force_login(alice)
    key = drawn_key(client, "/")
    first = client.post("/", {"body": "Only once, please", "idempotency_key": key}, follow=True)
    again = client.post("/", {"body": "Only once, please", "idempotency_key": key}, follow=True)
    assert "Posted." in first.content.decode()
    assert "already posted from this page, so it was not posted again" in again.content.decode()
    assert bodies_of(alice) == ["Only once, please"]
    # The same box with other text later is a new post; a newly drawn form posts the same text again.
    client.post("/", {"body": "Something else", "idempotency_key": key})
    client.post("/", {"body": "Only once, please", "idempotency_key": drawn_key(client, "/")})
    assert sorted(bodies_of(alice)) == ["Only once, please", "Only once, please", "Something else"]


def test_a_reply_sent_again_from_the_same_drawn_form_is_not_a_duplicate(client, alice, make_user):
    parent = comment_create(author_id=str(make_user("bob").pk), body="Question").comment_id
    client.force_login(alice)
    key = drawn_key(client, f"/c/{parent}/")
    for _ in range(2):
        answer = client.post(f"/c/{parent}/", {"body": "An answer", "idempotency_key": key})
        assert answer.status_code == 302
    assert bodies_of(alice) == ["An answer"]


def test_a_line_break_counts_as_one_character_as_in_the_box(client, alice):
    client.force_login(alice)
    lines = ["x" * 99] * 20  # 1,980 characters and 19 line breaks: 1,999 in the box, 2,018 as CRLF
    answer = client.post("/", {"body": "\r\n".join(lines)})
    assert answer.status_code == 302, re.findall(r'<ul class="errorlist".*?</ul>', answer.content.decode())
    assert bodies_of(alice) == ["\n".join(lines)]  # stored with LF
    too_long = client.post("/", {"body": "\r\n".join(lines) + "\r\nx"})  # 2,001 in the box
    assert too_long.status_code == 200 and "this has 2001" in too_long.content.decode()
    assert "a line break counts as one" in client.get("/").content.decode()


def test_the_api_counts_line_breaks_as_the_page_does(api, alice):
    api.as_user(alice)
    body = "\r\n".join(["y" * 99] * 20)
    answer = api.post("/api/comments/", {"body": body}, format="json")
    assert answer.status_code == 201, answer.json()
    assert answer.json()["body"] == body.replace("\r\n", "\n")
    over = api.post("/api/comments/", {"body": body + "\r\ny"}, format="json")
    assert over.status_code == 400 and "body" in over.json()
    assert services.comment_body_clean("a\r\nb\rc") == "a\nb\nc"


def test_a_post_refused_once_goes_through_on_the_next_press_with_the_same_key(client, alice, monkeypatch):
    real, calls = views.comment_create, []

    def refused_once(**kwargs):
        calls.append(kwargs)
        if len(calls) == 1:
            raise services.ApplicationError("Try again.", field="body")
        return real(**kwargs)

    monkeypatch.setattr(views, "comment_create", refused_once)
    client.force_login(alice)
    key = drawn_key(client, "/")
    refused = client.post("/", {"body": "Second time lucky", "idempotency_key": key})
    assert refused.status_code == 200 and "Try again." in refused.content.decode()
    assert f'value="{key}"' in refused.content.decode()  # the form drawn again keeps its key
    assert client.post("/", {"body": "Second time lucky", "idempotency_key": key}).status_code == 302
    assert bodies_of(alice) == ["Second time lucky"]
