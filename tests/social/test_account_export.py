"""GET /api/me/export/ and /me/export/: everything stored about the person, streamed, limited."""

from __future__ import annotations

import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.http import StreamingHttpResponse

from actions.comments import comment_create
from actions.likes import like_add
from actions.reactions import reaction_add
from notifications.preferences.services import preferences_update, thread_mute
from social.models import Relation
from tests.notifications.helpers import fold, post, uid

HEAVY_COMMENTS = 300
HEAVY_LIKES = 300


@pytest.fixture
def alice(make_user):
    return make_user("alice", display_name="Alice")


@pytest.fixture
def bob(make_user):
    return make_user("bob", display_name="Bob")


def read_stream(response) -> tuple[int, dict]:
    """Iterate the streamed answer piece by piece; returns (pieces, the parsed document)."""
    assert isinstance(response, StreamingHttpResponse)
    content = response.streaming_content
    assert isinstance(content, Iterator)  # a WSGI answer: not async
    pieces = [piece.decode() for piece in content]
    return len(pieces), json.loads("".join(pieces))


def test_a_heavy_users_export_streams_valid_json_with_everything(api, alice, bob):
    with ThreadPoolExecutor(8) as pool:
        own = list(pool.map(lambda n: post(alice, f"Alice {n}"), range(HEAVY_COMMENTS)))
        bobs = list(pool.map(lambda n: post(bob, f"Bob {n}"), range(HEAVY_LIKES)))
        list(pool.map(lambda comment_id: like_add(comment_id=comment_id, user_id=uid(alice)), bobs))
        list(pool.map(lambda comment_id: like_add(comment_id=comment_id, user_id=uid(bob)), own[:5]))
    comment_create(author_id=uid(bob), body="A reply", parent_id=own[0])
    fold()
    preferences_update(user_id=uid(alice), patch={"kinds": {"reply": {"email": True}}})
    thread_mute(user_id=uid(alice), thread_id=bobs[0])
    Relation(uid(alice), uid(bob), muted_at=1).save()

    response = api.as_user(alice).get("/api/me/export/")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/json"
    pieces, document = read_stream(response)
    assert pieces > 10  # written as it is read, not built whole
    assert document["profile"]["username"] == "alice"
    assert len(document["comments"]) == HEAVY_COMMENTS
    assert {item["body"] for item in document["comments"]} == {f"Alice {n}" for n in range(HEAVY_COMMENTS)}
    assert {item["comment_id"] for item in document["likes"]} == set(bobs)
    likes_of_hers = document["like_notifications"]
    assert sorted(item["comment_id"] for item in likes_of_hers) == sorted(own[:5])
    assert {(item["num_likes"], tuple(item["liker_ids"]), item["unread"]) for item in likes_of_hers} == {
        (1, (uid(bob),), True)
    }
    assert [entry["kind"] for entry in document["feed"]] == ["reply"]
    assert document["preferences"]["kinds"]["reply"]["email"] is True
    assert document["thread_subscriptions"] == [
        {"thread_id": bobs[0], "state": "mute", "at": document["thread_subscriptions"][0]["at"]}
    ]
    assert document["blocks_and_mutes"][0]["user_id"] == uid(bob)
    assert {"activity", "reports", "mail_sent"} <= set(document)
    assert any(line["action"] == "like" for line in document["activity"])
    # Nothing of Bob's in it.
    assert not any(item["body"].startswith("Bob") for item in document["comments"])


def test_the_page_downloads_it_and_both_are_limited(client, api, alice, settings):
    settings.RATE_LIMITS_ENABLED = True
    client.force_login(alice)
    settings_page = client.get("/me/settings/")
    assert b'href="/me/export/"' in settings_page.content
    page = client.get("/me/export/")
    assert page.status_code == 200 and "attachment" in page["Content-Disposition"]
    _, document = read_stream(page)
    assert document["profile"]["id"] == uid(alice)
    assert api.as_user(alice).get("/api/me/export/").status_code == 200
    assert api.get("/api/me/export/").status_code == 200
    refused = api.get("/api/me/export/")
    assert refused.status_code == 429 and refused["Retry-After"]
    assert client.get("/me/export/").status_code == 429


def test_anonymous_gets_no_export(api, client):
    assert api.get("/api/me/export/").status_code in (401, 403)
    assert client.get("/me/export/").status_code == 302


def _times(value, path=""):
    """Every (path, value) of a key naming a time (`at`, `*_at`) anywhere in the document."""
    if isinstance(value, dict):
        for key, inner in value.items():
            if key == "at" or key.endswith("_at"):
                yield f"{path}.{key}", inner
            yield from _times(inner, f"{path}.{key}")
    elif isinstance(value, list):
        for inner in value:
            yield from _times(inner, path)


def test_the_export_reads_for_a_person_times_texts_and_names(api, alice, bob):
    """Beside the ids a machine reads: ISO times everywhere, a liked comment's text, the names of
    the other people (likers, the people blocked or muted)."""
    from datetime import datetime

    hers = post(alice, "Alice's own words")
    his = post(bob, "Bob's words Alice liked")
    like_add(comment_id=his, user_id=uid(alice))
    like_add(comment_id=hers, user_id=uid(bob))
    reaction_add(comment_id=hers, user_id=uid(bob), name="heart")
    fold()
    thread_mute(user_id=uid(alice), thread_id=his)
    Relation(uid(alice), uid(bob), muted_at=1_790_000_000).save()
    _, document = read_stream(api.as_user(alice).get("/api/me/export/"))

    assert document["likes"] == [{"comment_id": his, "comment_text": "Bob's words Alice liked"}]
    notices = {notice["kind"]: notice for notice in document["like_notifications"]}
    assert set(notices) == {"like", "reaction"} and len(document["like_notifications"]) == 2
    for notice in notices.values():  # her comment's likes and its reactions, each about the comment itself
        assert notice["comment_id"] == hers and notice["comment_text"] == "Alice's own words"
        assert notice["likers"] == [{"id": uid(bob), "name": "Bob"}]
    [relation] = document["blocks_and_mutes"]
    assert (relation["name"], relation["muted_at"]) == ("Bob", "2026-09-21T14:13:20+00:00")
    times = list(_times(document))
    assert times, "the document names times"
    unreadable = [(path, value) for path, value in times if value is not None and not isinstance(value, str)]
    assert unreadable == []
    for path, value in times:
        if value is not None:
            datetime.fromisoformat(value)  # raises on anything but ISO 8601
