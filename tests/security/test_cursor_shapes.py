"""Every paged list answers 400 naming `cursor` for any cursor it did not issue, even one
signed with the server's own key but holding an odd shape; pages start over instead."""

import pytest

from actions.comments import comment_create
from delivery import services as delivery_services
from delivery.models import AUDIENCE_ALL
from project.dynamo.cursors import cursor_encode
from social.activity import selectors as activity_selectors
from social.activity.services import activity_record

pytestmark = pytest.mark.django_db(transaction=True)

UUID = "5f0c5a2e-8f4e-4c59-9b0a-3a1d2c4b5e6f"
AT = "2026-11-22T10:00:00.000000Z"

# Shapes a list could be handed whatever it issues: raw DynamoDB keys, wrong types, odd
# strings DynamoDB refuses as keys (empty, over 1 KB, NUL), numbers where strings go...
COMMON_SHAPES: list[object] = [
    None,
    0,
    True,
    1.5,
    "",
    "x" * 1500,
    [],
    {},
    [1, 2, 3, 4],
    {"S": "x"},
    {"a": {"b": {"c": {}}}},
]
SHAPES = {
    "timeline": [
        *COMMON_SHAPES,
        {"day": 20261122, "before": f"{AT}#{UUID}"},
        {"day": "20261122", "before": ""},
        {"day": "20261122", "before": "z" * 1100},
        {"day": "20261122", "before": f"{AT}#{UUID}\x00"},
        {"day": "", "before": f"{AT}#{UUID}"},
        {"day": "2026112é", "before": f"{AT}#{UUID}"},
        {"day": "20261122", "before": {"S": "x"}},
        {"day": "20261122", "before": f"{AT}#{UUID}", "extra": 1},
    ],
    "replies": [
        *COMMON_SHAPES,
        {"after": None},
        {"after": ""},
        {"after": "\x00"},
        {"after": "é" * 600},
        {"after": ["x"]},
        {"after": f"{AT}#{UUID}", "day": "20261122"},
    ],
    "inbox": [
        *COMMON_SHAPES,
        [1, 2**70, "like:x"],
        [True, 1, "like:x"],
        [1, True, "like:x"],
        [1, -1, "feed:x"],
        [1, 1.5, "feed:x"],
        [2, 1, "feed:x"],
        [0, 1, "like:" + "9" * 2000],
        [0, 1, "other:x"],
        [0, 1, {"S": "x"}],
        [0, 1, "like:\x00"],
        [0, 1, "feed:x", 4],
    ],
    "deliveries": [
        *COMMON_SHAPES,
        {"list_bucket": {"S": "all"}, "created_at": {"S": AT}, "delivery_id": {"S": "a" * 32}},
        {"list_bucket": {"S": "all"}, "created_at": {"N": "1"}, "delivery_id": {"S": "x"}},
        {"created_at": {"B": "AAAA"}, "delivery_id": {"S": "x"}},
        {"created_at": {"S": ""}, "delivery_id": {"S": ""}},
        {"created_at": {}, "delivery_id": {}},
        {"created_at": {"S": AT, "N": "1"}, "delivery_id": {"S": "x"}},
        {"created_at": {"SS": ["a"]}, "delivery_id": {"S": "x"}},
        {"created_at": AT, "delivery_id": "x" * 2000},
        {"created_at": AT, "delivery_id": ""},
        {"created_at": "", "delivery_id": "a" * 32},
        {"created_at": AT, "delivery_id": "a" * 32, "list_bucket": "other"},
        {"created_at": 1, "delivery_id": "a" * 32},
    ],
}


@pytest.fixture
def lists(make_user, api):
    """Every paged API list with a next page, and who may read it: (path, query, user)."""
    staff = make_user("boss", is_staff=True)
    alice = make_user("alice")
    parents = [comment_create(author_id=str(alice.pk), body=f"parent {n}") for n in range(2)]
    parent = parents[0]
    for n in range(2):  # two replies to one parent (a page of replies), one to each (two inbox items)
        comment_create(author_id=str(staff.pk), body=f"reply {n}", parent_id=parent.comment_id)
    comment_create(author_id=str(staff.pk), body="reply", parent_id=parents[1].comment_id)
    for n in range(2):
        delivery_services.delivery_create(
            title=f"Hi {n}",
            body="Hello",
            url=None,
            audience=delivery_services.Audience(kind=AUDIENCE_ALL),
            created_by=staff,
        )
    return {
        "timeline": ("/api/comments/", "timeline", alice),
        "replies": (f"/api/comments/{parent.comment_id}/replies/", f"replies:{parent.comment_id}", alice),
        "inbox": ("/api/notifications/", f"inbox:{alice.pk}", alice),
        "deliveries": ("/api/deliveries/", "deliveries", staff),
    }


def assert_refused(answer, what):
    assert answer.status_code == 400, (what, answer.status_code, answer.content[:300])
    body = answer.json()
    assert body["code"] == "invalid_cursor" and body["cursor"], (what, body)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_a_signed_cursor_of_any_other_shape_is_a_400_naming_cursor(api, lists, name):
    path, query, user = lists[name]
    client = api.as_user(user)
    issued = client.get(path, {"limit": 1}).json()["next"]
    assert issued and client.get(path, {"limit": 1, "cursor": issued}).status_code == 200
    for shape in SHAPES[name]:
        assert_refused(client.get(path, {"cursor": cursor_encode(shape, query=query)}), shape)


def test_a_cursor_of_one_list_is_refused_by_every_other(api, lists):
    issued = {}
    for name, (path, _, user) in lists.items():
        issued[name] = api.as_user(user).get(path, {"limit": 1}).json()["next"]
    for name, (path, _, user) in lists.items():
        for other, cursor in issued.items():
            if other != name:
                assert_refused(api.as_user(user).get(path, {"cursor": cursor}), (name, other))


def test_pages_given_an_odd_cursor_show_their_first_page(lists, client):
    staff = lists["deliveries"][2]
    client.force_login(staff)
    for page, query in [
        ("/", "timeline"),
        ("/notifications/", f"inbox:{staff.pk}"),
        ("/admin/dynamo/deliveries/", "deliveries"),
    ]:
        for shape in SHAPES["deliveries"][-6:] + SHAPES["timeline"][-4:]:
            answer = client.get(page, {"cursor": cursor_encode(shape, query=query)})
            assert answer.status_code == 200, (page, shape)


def test_activity_cursors_are_checked_bound_to_their_user_and_expire(make_user, client, settings):
    alice, bob = make_user("alice"), make_user("bob")
    for n in range(3):
        activity_record(user_id=str(alice.pk), action="comment", object_id=f"c{n}")
    page = activity_selectors.activity_of_user(user_id=str(alice.pk), limit=1)
    assert page.next_cursor
    second = activity_selectors.activity_of_user(user_id=str(alice.pk), limit=1, cursor=page.next_cursor)
    assert len(second.results) == 1
    query = f"activity:{alice.pk}"
    for cursor in [
        cursor_encode({"month": "209901", "before": "0" * 13 + "#" + "a" * 12}, query=query),
        cursor_encode({"month": 202611, "before": "x"}, query=query),
        cursor_encode({"month": "202611", "before": ""}, query=query),
        cursor_encode(["202611"], query=query),
        "forged",
    ]:
        with pytest.raises(activity_selectors.InvalidCursor):
            activity_selectors.activity_of_user(user_id=str(alice.pk), cursor=cursor)
    with pytest.raises(activity_selectors.InvalidCursor):
        activity_selectors.activity_of_user(user_id=str(bob.pk), cursor=page.next_cursor)
    client.force_login(alice)
    assert client.get("/me/activity/", {"cursor": page.next_cursor}).status_code == 200
    settings.CURSOR_MAX_AGE = -1
    with pytest.raises(activity_selectors.InvalidCursor):
        activity_selectors.activity_of_user(user_id=str(alice.pk), cursor=page.next_cursor)
    answer = client.get("/me/activity/", {"cursor": page.next_cursor}, follow=True)
    assert answer.status_code == 200 and b"invalid or has expired" in answer.content
