"""GET/PATCH /api/me/preferences/ and PUT/DELETE /api/comments/<id>/mute/ and /watch/ (docs/reference/http.md)."""

from __future__ import annotations

import uuid

import pytest

from actions.comments import comment_create
from notifications.preferences.selectors import preferences_get, thread_state
from social.services import comment_delete, comment_set_hidden
from tests.notifications.helpers import post, uid

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]

DEFAULTS = {
    "kinds": {
        "like": {"inbox": True, "email": False, "push": False},
        "reaction": {"inbox": True, "email": False, "push": False},
        "reply": {"inbox": True, "email": False, "push": False},
        "mention": {"inbox": True, "email": False, "push": False},
        "message": {"inbox": True, "email": False, "push": False},
    },
    "digest": "off",
}


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/me/preferences/"),
        ("patch", "/api/me/preferences/"),
        ("put", f"/api/comments/{uuid.uuid4()}/mute/"),
        ("delete", f"/api/comments/{uuid.uuid4()}/mute/"),
        ("put", f"/api/comments/{uuid.uuid4()}/watch/"),
        ("delete", f"/api/comments/{uuid.uuid4()}/watch/"),
    ],
)
def test_anonymous_callers_get_401(api, method, path):
    assert getattr(api, method)(path, format="json").status_code == 401


def test_get_answers_the_contract_and_patch_any_part(api, make_user):
    client = api.as_user(make_user("ann"))
    assert client.get("/api/me/preferences/").json() == DEFAULTS

    answer = client.patch("/api/me/preferences/", {"kinds": {"reply": {"email": True}}}, format="json")
    assert answer.status_code == 200
    assert answer.json()["kinds"]["reply"] == {"inbox": True, "email": True, "push": False}
    answer = client.patch("/api/me/preferences/", {"digest": "weekly"}, format="json")
    assert answer.json() == DEFAULTS | {
        "kinds": DEFAULTS["kinds"] | {"reply": {"inbox": True, "email": True, "push": False}},
        "digest": "weekly",
    }
    assert client.get("/api/me/preferences/").json() == answer.json()
    assert client.patch("/api/me/preferences/", {}, format="json").json() == answer.json()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"kinds": {"message": {"inbox": False}}}, "kinds.message.inbox"),
        ({"kinds": {"like": {"email": "true"}}}, "kinds.like.email"),
        ({"kinds": {"like": {"sms": True}}}, "kinds.like.sms"),
        ({"kinds": {"follow": {"inbox": True}}}, "kinds.follow"),
        ({"digest": "monthly"}, "digest"),
        ({"theme": "dark"}, "theme"),
        ([1, 2], "non_field_errors"),
    ],
)
def test_a_bad_patch_is_a_400_naming_the_field_and_changes_nothing(api, make_user, body, field):
    user = make_user("ann")
    answer = api.as_user(user).patch("/api/me/preferences/", body, format="json")
    assert answer.status_code == 400
    assert field in answer.json()
    assert preferences_get(user_id=uid(user), consistent=True).as_json() == DEFAULTS


def test_mute_and_watch_answer_the_thread_state(api, make_user):
    author, reader = make_user("author"), make_user("reader")
    root = post(author, "A thread")
    reply = comment_create(author_id=uid(author), body="A reply", parent_id=root).comment_id
    client = api.as_user(reader)

    answer = client.put(f"/api/comments/{reply}/watch/")
    assert answer.status_code == 200
    assert answer.json() == {"thread_id": root, "muted": False, "watching": True}
    # Muting replaces the watch; the thread is the root whichever comment of it is named.
    assert client.put(f"/api/comments/{root}/mute/").json() == {"thread_id": root, "muted": True, "watching": False}
    assert client.put(f"/api/comments/{root}/mute/").json()["muted"] is True  # idempotent
    assert client.delete(f"/api/comments/{reply}/watch/").json() == {
        "thread_id": root,
        "muted": True,
        "watching": False,
    }
    assert client.delete(f"/api/comments/{reply}/mute/").json() == {
        "thread_id": root,
        "muted": False,
        "watching": False,
    }
    assert client.delete(f"/api/comments/{reply}/mute/").status_code == 200
    assert thread_state(thread_id=root, user_id=uid(reader)) is None


@pytest.mark.parametrize("what", ["unknown", "malformed", "hidden", "deleted"])
def test_mute_and_watch_of_a_comment_one_cannot_see_is_a_404(api, make_user, what):
    author, reader = make_user("author"), make_user("reader")
    comment_id = post(author, "Soon gone")
    if what == "unknown":
        comment_id = str(uuid.uuid4())
    elif what == "malformed":
        comment_id = "not-a-comment"
    elif what == "hidden":
        comment_set_hidden(comment_id=comment_id, hidden=True)
    else:
        comment_delete(comment_id=comment_id, author_id=uid(author))
    client = api.as_user(reader)
    for path in (f"/api/comments/{comment_id}/mute/", f"/api/comments/{comment_id}/watch/"):
        assert client.put(path).status_code == 404
        assert client.delete(path).status_code == 404
    assert thread_state(thread_id=comment_id, user_id=uid(reader)) is None


def test_changes_are_rate_limited_per_account(api, make_user, settings):
    settings.RATE_LIMITS_ENABLED = True
    settings.RATE_LIMITS = settings.RATE_LIMITS | {"preferences": ("2/min", "2/min")}
    user = make_user("ann")
    comment_id = post(make_user("author"))
    client = api.as_user(user)
    assert client.put(f"/api/comments/{comment_id}/watch/").status_code == 200
    assert client.patch("/api/me/preferences/", {"digest": "daily"}, format="json").status_code == 200
    refused = client.put(f"/api/comments/{comment_id}/mute/")
    assert refused.status_code == 429
    assert "Retry-After" in refused.headers
    assert thread_state(thread_id=comment_id, user_id=uid(user)) == "watch"
    assert client.get("/api/me/preferences/").status_code == 200  # reading is not limited
