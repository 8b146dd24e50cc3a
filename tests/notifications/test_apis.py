"""The notifications API (docs/reference/http.md): shapes, order, pagination, marking read, permissions."""

import uuid

import pytest

from notifications import services as notification_services
from tests.notifications.helpers import like, post, uid

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]

LIKE_FIELDS = {"id", "kind", "comment_id", "actors", "actor_count", "text", "unread", "updated_at"}


@pytest.fixture
def liked(people):
    """The author's two comments: `first` liked by three people and read, `second` liked by one, unread."""
    author = people["author"]
    first, second = post(author, "first"), post(author, "second")
    for name in ("alice", "bob", "carol"):
        like(people[name], first)
    notification_services.like_notifications_mark_read(user_id=uid(author), comment_ids=[first])
    like(people["dave"], second)
    return {"first": first, "second": second}


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/notifications/"),
        ("get", "/api/notifications/unread-count/"),
        ("post", "/api/notifications/read/"),
        ("post", "/api/notifications/read-all/"),
    ],
)
def test_anonymous_callers_get_401(api, method, path):
    assert getattr(api, method)(path).status_code == 401


def test_list_is_unread_first_with_the_contract_shape(api, people, liked):
    answer = api.as_user(people["author"]).get("/api/notifications/")
    assert answer.status_code == 200
    body = answer.json()
    assert body["unread_count"] == 1
    assert [set(item) for item in body["results"]] == [LIKE_FIELDS, LIKE_FIELDS]
    unread, read = body["results"]
    assert unread["comment_id"] == liked["second"] and unread["unread"] is True
    assert unread["text"] == "Dave liked your comment"
    assert unread["actors"] == [{"id": uid(people["dave"]), "display_name": "Dave"}]
    assert read["comment_id"] == liked["first"] and read["unread"] is False
    assert (read["text"], read["actor_count"], read["kind"]) == ("Alice and 2 others liked your comment", 3, "like")
    assert body["next"] is None


def test_pagination_walks_every_notification_once(api, people):
    author = people["author"]
    comment_ids = [post(author, f"c{n}") for n in range(5)]
    for comment_id in comment_ids:
        like(people["alice"], comment_id)
    notification_services.like_notifications_mark_read(user_id=uid(author), comment_ids=comment_ids[:3])
    client = api.as_user(author)
    seen, cursor = [], None
    while True:
        answer = client.get("/api/notifications/", {"limit": 2, **({"cursor": cursor} if cursor else {})}).json()
        seen += [(item["comment_id"], item["unread"]) for item in answer["results"]]
        cursor = answer["next"]
        if not cursor:
            break
    assert [unread for _, unread in seen] == [True, True, False, False, False]
    assert sorted(cid for cid, _ in seen) == sorted(comment_ids)
    assert [cid for cid, unread in seen if unread] == comment_ids[:2:-1]  # newest update first


def test_bad_cursor_and_limit_are_400(api, people):
    client = api.as_user(people["author"])
    answer = client.get("/api/notifications/", {"cursor": "garbage"})
    assert answer.status_code == 400 and "cursor" in answer.json()
    assert client.get("/api/notifications/", {"limit": 0}).status_code == 400
    assert client.get("/api/notifications/", {"limit": 101}).status_code == 400


def test_unread_count_and_read(api, people, liked):
    client = api.as_user(people["author"])
    assert client.get("/api/notifications/unread-count/").json() == {"unread_count": 1}
    answer = client.post("/api/notifications/read/", {"comment_ids": [liked["second"]]}, format="json")
    assert answer.status_code == 200 and answer.json() == {"unread_count": 0}
    assert all(not item["unread"] for item in client.get("/api/notifications/").json()["results"])


def test_read_accepts_entry_ids_for_the_feed(api, people, liked):
    client = api.as_user(people["author"])
    answer = client.post("/api/notifications/read/", {"entry_ids": ["e1"]}, format="json")
    assert answer.status_code == 200 and answer.json() == {"unread_count": 1}


def test_read_all(api, people, liked):
    client = api.as_user(people["author"])
    like(people["dave"], liked["first"])
    assert client.get("/api/notifications/unread-count/").json() == {"unread_count": 2}
    assert client.post("/api/notifications/read-all/").json() == {"unread_count": 0}
    assert client.post("/api/notifications/read-all/").json() == {"unread_count": 0}


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"comment_ids": [str(uuid.uuid4()) for _ in range(101)]}, "comment_ids"),
        ({"comment_ids": ["not-a-uuid"]}, "comment_ids"),
        ({"comment_ids": "abc"}, "comment_ids"),
        ({"entry_ids": [str(n) for n in range(101)]}, "entry_ids"),
        ({"comment_ids": [], "color": "red"}, "color"),
        ({}, "comment_ids"),
    ],
)
def test_bad_read_requests_are_400_with_the_field(api, people, liked, payload, field):
    answer = api.as_user(people["author"]).post("/api/notifications/read/", payload, format="json")
    assert answer.status_code == 400
    assert field in answer.json()
    assert api.get("/api/notifications/unread-count/").json() == {"unread_count": 1}


def test_nobody_reads_or_marks_another_users_notifications(api, people, liked):
    intruder = api.as_user(people["alice"])
    assert intruder.get("/api/notifications/").json() == {"unread_count": 0, "results": [], "next": None}
    answer = intruder.post("/api/notifications/read/", {"comment_ids": [liked["second"]]}, format="json")
    assert answer.json() == {"unread_count": 0}
    intruder.post("/api/notifications/read-all/")
    owner = api.as_user(people["author"])
    assert owner.get("/api/notifications/unread-count/").json() == {"unread_count": 1}
    assert [item["unread"] for item in owner.get("/api/notifications/").json()["results"]] == [True, False]
