"""Cursors are signed and bound to the list (and user) they page."""

import time

import pytest
from django.core import signing

from actions.comments import comment_create
from delivery import services as delivery_services
from delivery.models import AUDIENCE_ALL
from notifications import selectors as inbox
from project.dynamo.cursors import cursor_encode

pytestmark = pytest.mark.django_db


def forged(payload, query) -> str:
    """A well-formed cursor signed with another key (what a client could make)."""
    return signing.dumps(payload, key="not-the-server-key", salt=f"project.dynamo.cursors:{query}", compress=True)


@pytest.fixture
def alice(make_user):
    return make_user("alice")


def posts(author, n, parent_id=None):
    return [comment_create(author_id=str(author.pk), body=f"c{i}", parent_id=parent_id).comment_id for i in range(n)]


def test_timeline_cursor_pages_and_a_forged_one_is_a_400(api, alice):
    posts(alice, 3)
    first = api.get("/api/comments/", {"limit": 2}).json()
    assert first["next"]
    second = api.get("/api/comments/", {"limit": 2, "cursor": first["next"]}).json()
    assert len(second["results"]) == 1
    for bad in ["garbage", forged({"day": "20261122", "before": "z"}, "timeline"), first["next"][:-2] + "xx"]:
        answer = api.get("/api/comments/", {"cursor": bad})
        assert answer.status_code == 400
        assert answer.json()["code"] == "invalid_cursor"
        assert answer.json()["cursor"]


def test_a_cursor_signed_for_one_list_is_refused_by_another(api, alice):
    parent = posts(alice, 3)[0]
    posts(alice, 3, parent_id=parent)
    timeline_cursor = api.get("/api/comments/", {"limit": 1}).json()["next"]
    replies_cursor = api.get(f"/api/comments/{parent}/replies/", {"limit": 1}).json()["next"]
    assert api.get(f"/api/comments/{parent}/replies/", {"cursor": timeline_cursor}).status_code == 400
    assert api.get("/api/comments/", {"cursor": replies_cursor}).status_code == 400
    other = posts(alice, 1)[0]
    assert api.get(f"/api/comments/{other}/replies/", {"cursor": replies_cursor}).status_code == 400
    assert api.get(f"/api/comments/{parent}/replies/", {"cursor": replies_cursor}).status_code == 200


def test_an_expired_cursor_is_a_400(api, alice, settings):
    posts(alice, 2)
    cursor = api.get("/api/comments/", {"limit": 1}).json()["next"]
    settings.CURSOR_MAX_AGE = -1
    assert api.get("/api/comments/", {"cursor": cursor}).status_code == 400


def test_inbox_cursor_is_bound_to_its_user(api, make_user):
    bob, carol = make_user("bob"), make_user("carol")
    cursor = inbox.encode_cursor((1, time.time_ns(), "like:x"), user_id=str(bob.pk))
    api.as_user(carol)
    answer = api.get("/api/notifications/", {"cursor": cursor})
    assert answer.status_code == 400 and answer.json()["code"] == "invalid_cursor"
    api.as_user(bob)
    assert api.get("/api/notifications/", {"cursor": cursor}).status_code == 200
    assert api.get("/api/notifications/", {"cursor": forged([0, 1, "feed:x"], f"inbox:{bob.pk}")}).status_code == 400


def test_inbox_cursor_ending_on_a_read_entry_older_than_the_retention(api, make_user, client):
    """The cursor the server itself hands out when a page ends on an old read feed entry."""
    bob = make_user("bob")
    old_ns = time.time_ns() - 40 * 24 * 3600 * 1_000_000_000
    cursor = inbox.encode_cursor((0, old_ns, "feed:old-entry"), user_id=str(bob.pk))
    api.as_user(bob)
    answer = api.get("/api/notifications/", {"cursor": cursor})
    assert answer.status_code == 200
    assert answer.json()["results"] == []
    client.force_login(bob)
    assert client.get("/notifications/", {"cursor": cursor}).status_code == 200


def test_delivery_cursor_forged_is_a_400_and_a_real_one_pages(api, make_user):
    staff = make_user("staff", is_staff=True)
    for i in range(3):
        delivery_services.delivery_create(
            title=f"t{i}", body="b", url=None, audience=delivery_services.Audience(kind=AUDIENCE_ALL), created_by=staff
        )
    api.as_user(staff)
    first = api.get("/api/deliveries/", {"limit": 2}).json()
    assert first["next"]
    assert api.get("/api/deliveries/", {"limit": 2, "cursor": first["next"]}).status_code == 200
    bad = forged({"delivery_id": {"S": "x" * 1100}}, "deliveries")
    answer = api.get("/api/deliveries/", {"cursor": bad})
    assert answer.status_code == 400 and answer.json()["code"] == "invalid_cursor"
    # A cursor of another list (signed by this server) is refused too.
    other_list = cursor_encode({"x": {"S": "y"}}, query="timeline")
    assert api.get("/api/deliveries/", {"cursor": other_list}).status_code == 400


@pytest.mark.parametrize("path", ["/", "/notifications/", "/admin/dynamo/deliveries/", "comment"])
def test_pages_start_over_with_a_message_on_a_forged_cursor(client, make_user, path):
    staff = make_user("staff", is_staff=True)
    comment_id = posts(staff, 1)[0]
    if path == "comment":
        path = f"/c/{comment_id}/"
    client.force_login(staff)
    answer = client.get(path, {"cursor": forged({"day": "x" * 1100, "before": "y"}, "timeline")}, follow=True)
    assert answer.status_code == 200
    assert "invalid or has expired" in answer.content.decode()
