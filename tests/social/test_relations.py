"""Blocking and muting people through the API and the pages: states, 404 and 400, the reply
refused with a clear 403 and nothing written, mentions that do nothing, the timeline without
muted people, the profile's buttons and the settings list with undo."""

from __future__ import annotations

import pytest

from actions.comments import comment_create
from notifications.feed.selectors import feed_entries_list
from social.models import Comment, Relation
from social.relations.selectors import relation_get
from social.relations.services import RELATIONS_MAX

pytestmark = [pytest.mark.django_db(transaction=True)]


def uid(user) -> str:
    return str(user.pk)


@pytest.fixture
def people(make_user, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return {name: make_user(name, display_name=name.capitalize()) for name in ("ann", "bob", "cid")}


def test_block_and_mute_answer_the_state_idempotently(api, people):
    ann, bob = people["ann"], people["bob"]
    client = api.as_user(ann)
    for _ in range(2):
        answer = client.put("/api/users/bob/block/")
        assert answer.status_code == 200, answer.content
        assert answer.json() == {"username": "bob", "blocked": True, "muted": False}
    assert client.put("/api/users/BOB/mute/").json() == {"username": "BOB", "blocked": True, "muted": True}
    assert client.get("/api/me/relations/").json() == {"results": [{"username": "bob", "blocked": True, "muted": True}]}
    assert client.delete("/api/users/bob/block/").json() == {"username": "bob", "blocked": False, "muted": True}
    for _ in range(2):
        assert client.delete("/api/users/bob/mute/").json() == {"username": "bob", "blocked": False, "muted": False}
    assert list(Relation.query(uid(ann), consistent_read=True)) == []  # nothing left behind
    assert client.get("/api/me/relations/").json() == {"results": []}
    assert relation_get(user_id=uid(bob), other_id=uid(ann)).silenced is False


def test_unknown_person_is_404_oneself_400_anonymous_refused(api, people):
    client = api.as_user(people["ann"])
    assert client.put("/api/users/nobody/block/").status_code == 404
    answer = client.put("/api/users/ann/mute/")
    assert answer.status_code == 400 and "yourself" in str(answer.json())
    api.credentials()
    assert api.put("/api/users/bob/block/").status_code in (401, 403)


def test_a_full_list_is_a_400(api, people, monkeypatch):
    monkeypatch.setattr("social.relations.services.RELATIONS_MAX", 1)
    client = api.as_user(people["ann"])
    assert client.put("/api/users/bob/block/").status_code == 200
    assert client.put("/api/users/bob/mute/").status_code == 200  # the same person takes no more room
    answer = client.put("/api/users/cid/mute/")
    assert answer.status_code == 400 and "at most" in str(answer.json())
    assert RELATIONS_MAX >= 100


def test_a_blocked_person_replying_gets_a_clear_403_and_nothing_is_written(api, people):
    ann, bob = people["ann"], people["bob"]
    mine = comment_create(author_id=uid(ann), body="Ann's comment").comment_id
    api.as_user(ann).put("/api/users/bob/block/")
    client = api.as_user(bob)
    answer = client.post("/api/comments/", {"body": "Let me in", "parent_id": mine}, format="json")
    assert answer.status_code == 403
    assert answer.json()["detail"] == "You can't reply to this comment: its author has blocked you."
    assert [c for c in Comment.scan() if c.author_id == uid(bob)] == []
    assert feed_entries_list(user_id=uid(ann)).results == []
    # Everything else goes on: a comment of their own, a reply to someone else.
    assert client.post("/api/comments/", {"body": "My own"}, format="json").status_code == 201
    theirs = comment_create(author_id=uid(people["cid"]), body="Cid's").comment_id
    assert client.post("/api/comments/", {"body": "Hi Cid", "parent_id": theirs}, format="json").status_code == 201


def test_the_reply_page_shows_the_refusal(client, people):
    ann, bob = people["ann"], people["bob"]
    mine = comment_create(author_id=uid(ann), body="Ann's comment").comment_id
    client.force_login(ann)
    client.post("/u/bob/relation/", {"action": "block"})
    client.force_login(bob)
    page = client.post(f"/c/{mine}/", {"body": "Let me in"})
    assert page.status_code == 403
    assert "its author has blocked you" in page.content.decode()


def test_a_blocked_persons_mention_does_nothing(api, people):
    ann, bob = people["ann"], people["bob"]
    api.as_user(ann).put("/api/users/bob/block/")
    comment_create(author_id=uid(bob), body="Hey @ann and @cid")
    assert feed_entries_list(user_id=uid(ann)).results == []
    assert [e.text for e in feed_entries_list(user_id=uid(people["cid"])).results] == ["Bob mentioned you"]


def test_mute_leaves_the_muted_out_of_the_muters_timeline_only(api, client, people):
    ann, bob, cid = people["ann"], people["bob"], people["cid"]
    comment_create(author_id=uid(bob), body="Bob speaks")
    comment_create(author_id=uid(cid), body="Cid speaks")
    api.as_user(ann).put("/api/users/bob/mute/")
    bodies = [c["body"] for c in api.as_user(ann).get("/api/comments/").json()["results"]]
    assert bodies == ["Cid speaks"]
    client.force_login(ann)
    page = client.get("/").content.decode()
    assert "Cid speaks" in page and "Bob speaks" not in page
    # Bob and everyone else see the timeline as before; Bob is not told.
    assert [c["body"] for c in api.as_user(bob).get("/api/comments/").json()["results"]] == ["Cid speaks", "Bob speaks"]
    api.credentials()
    assert len(api.get("/api/comments/").json()["results"]) == 2


def test_the_timeline_pages_on_past_many_muted_comments(api, people):
    ann, bob, cid = people["ann"], people["bob"], people["cid"]
    comment_create(author_id=uid(cid), body="oldest")
    for n in range(5):
        comment_create(author_id=uid(bob), body=f"bob {n}")
    comment_create(author_id=uid(cid), body="newest")
    api.as_user(ann).put("/api/users/bob/block/")
    first = api.as_user(ann).get("/api/comments/?limit=1").json()
    assert [c["body"] for c in first["results"]] == ["newest"]
    second = api.as_user(ann).get(f"/api/comments/?limit=1&cursor={first['next']}").json()
    assert [c["body"] for c in second["results"]] == ["oldest"]


def test_profile_buttons_and_the_settings_list_with_undo(client, people):
    ann = people["ann"]
    client.force_login(ann)
    profile = client.get("/u/bob/").content.decode()
    assert 'value="block"' in profile and 'value="mute"' in profile
    assert 'value="block"' not in client.get("/u/ann/").content.decode()  # not on one's own
    answer = client.post("/u/bob/relation/", {"action": "block"}, follow=True)
    page = answer.content.decode()
    assert "Blocked bob" in page and 'value="unblock"' in page
    client.post("/u/cid/relation/", {"action": "mute"})

    settings_page = client.get("/me/settings/").content.decode()
    assert 'href="/me/people/"' in settings_page
    assert 'href="/me/people/"' in client.get("/me/notifications/").content.decode()
    listing = client.get("/me/people/").content.decode()
    assert "Bob (@bob)" in listing and "Cid (@cid)" in listing
    undone = client.post("/u/bob/relation/", {"action": "unblock", "back": "list"}, follow=True)
    assert undone.redirect_chain[-1][0] == "/me/people/"
    assert "You blocked nobody." in undone.content.decode()
    assert client.post("/u/nobody/relation/", {"action": "mute"}).status_code == 404
    client.logout()
    assert 'value="block"' not in client.get("/u/bob/").content.decode()


def test_a_blocked_persons_earlier_replies_leave_the_blockers_view_of_the_thread(api, people):
    ann, bob, cid = people["ann"], people["bob"], people["cid"]
    mine = comment_create(author_id=uid(ann), body="Ann's comment").comment_id
    comment_create(author_id=uid(bob), body="Bob's reply", parent_id=mine)
    comment_create(author_id=uid(cid), body="Cid's reply", parent_id=mine)
    client = api.as_user(ann)
    assert client.put("/api/users/bob/block/").status_code == 200
    bodies = [reply["body"] for reply in client.get(f"/api/comments/{mine}/replies/").json()["results"]]
    assert bodies == ["Cid's reply"]
    seen_by_cid = api.as_user(cid).get(f"/api/comments/{mine}/replies/").json()["results"]
    assert [reply["body"] for reply in seen_by_cid] == ["Bob's reply", "Cid's reply"]  # others still see it


def test_the_blocked_person_is_told_instead_of_offered_a_reply_form(client, people):
    ann, bob = people["ann"], people["bob"]
    mine = comment_create(author_id=uid(ann), body="Ann's comment").comment_id
    client.force_login(ann)
    client.post("/u/bob/relation/", {"action": "block"})
    client.force_login(bob)
    page = client.get(f"/c/{mine}/").content.decode()
    assert 'id="blocked-reply"' in page and "its author has blocked you" in page
    assert 'name="body"' not in page  # no form to type into
    client.force_login(people["cid"])
    assert 'name="body"' in client.get(f"/c/{mine}/").content.decode()
