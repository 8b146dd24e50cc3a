"""The JSON API of comments, likes, users and tokens (docs/reference/http.md), including bad input."""

import uuid
from unittest import mock

import pytest

from actions.comments import comment_create
from project.clock import ManualClock, clock_override
from social import services
from social.counters import LIKES, counter_key, counter_value
from social.models import Like

pytestmark = pytest.mark.django_db

MISSING = "00000000-0000-0000-0000-000000000000"


def post_comment(api, user, body="Hello", **extra):
    return api.as_user(user).post("/api/comments/", {"body": body, **extra}, format="json")


# --- users and tokens -------------------------------------------------------


def test_sign_up_and_get_a_token(api, django_user_model):
    answer = api.post(
        "/api/users/", {"username": "zoe", "password": "a-long-passw0rd", "display_name": "Zoe"}, format="json"
    )
    assert answer.status_code == 201
    assert answer.json() == {
        "id": str(django_user_model.objects.get(username="zoe").pk),
        "username": "zoe",
        "display_name": "Zoe",
    }
    token = api.post("/api/auth/token/", {"username": "zoe", "password": "a-long-passw0rd"}, format="json")
    assert token.status_code == 200
    api.credentials(HTTP_AUTHORIZATION=f"Token {token.json()['token']}")
    assert api.post("/api/comments/", {"body": "first"}, format="json").status_code == 201


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"username": "zoe", "password": "short", "display_name": "Z"}, "password"),
        ({"username": "bad name!", "password": "a-long-passw0rd"}, "username"),
        ({"username": "zoe", "password": "a-long-passw0rd", "display_name": "x" * 51}, "display_name"),
        ({"username": "zoe", "password": "a-long-passw0rd", "admin": True}, "admin"),
        ({"password": "a-long-passw0rd"}, "username"),
    ],
)
def test_sign_up_rejects_bad_input(api, django_user_model, payload, field):
    answer = api.post("/api/users/", payload, format="json")
    assert answer.status_code == 400
    assert field in answer.json()
    assert not django_user_model.objects.filter(username="zoe").exists()


def test_sign_up_rejects_a_taken_username(api, alice):
    answer = api.post("/api/users/", {"username": "ALICE", "password": "a-long-passw0rd"}, format="json")
    assert answer.status_code == 400
    assert "username" in answer.json()


def test_sign_up_can_be_closed(api, settings, django_user_model):
    settings.SIGNUP_OPEN = False
    answer = api.post("/api/users/", {"username": "zoe", "password": "a-long-passw0rd"}, format="json")
    assert answer.status_code == 403
    assert not django_user_model.objects.filter(username="zoe").exists()


def test_token_with_a_wrong_password_is_refused(api, alice):
    answer = api.post("/api/auth/token/", {"username": "alice", "password": "nope"}, format="json")
    assert answer.status_code == 400


def test_a_bad_token_is_401(api):
    api.credentials(HTTP_AUTHORIZATION="Token not-a-token")
    assert api.get("/api/comments/").status_code == 401


# --- comments ---------------------------------------------------------------


def test_post_and_read_a_comment(api, alice):
    answer = post_comment(api, alice, "  Hello world  ")
    assert answer.status_code == 201
    comment = answer.json()
    assert comment["body"] == "Hello world"
    assert comment["author"] == {"id": str(alice.pk), "username": "alice", "display_name": "Alice"}
    assert comment["like_count"] == 0
    assert comment["liked"] is False
    assert comment["parent_id"] is None
    uuid.UUID(comment["id"])
    again = api.get(f"/api/comments/{comment['id']}/")
    assert again.status_code == 200
    assert again.json() == comment


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"body": ""}, "body"),
        ({"body": "   "}, "body"),
        ({"body": "x" * 2001}, "body"),
        ({"body": ["a list"]}, "body"),
        ({"body": "ok", "parent_id": "not-a-uuid"}, "parent_id"),
        ({"body": "ok", "parent_id": MISSING}, "parent_id"),
        ({"body": "ok", "author_id": "1"}, "author_id"),
        ({}, "body"),
    ],
)
def test_bad_comments_are_400_and_change_nothing(api, alice, payload, field):
    answer = api.as_user(alice).post("/api/comments/", payload, format="json")
    assert answer.status_code == 400
    assert field in answer.json()
    assert api.get("/api/comments/").json()["results"] == []


def test_body_of_exactly_2000_characters_is_accepted(api, alice):
    assert post_comment(api, alice, "x" * 2000).status_code == 201


def test_malformed_json_is_400(api, alice):
    answer = api.as_user(alice).post("/api/comments/", "{not json", content_type="application/json")
    assert answer.status_code == 400


def test_posting_requires_authentication(api):
    answer = api.post("/api/comments/", {"body": "hi"}, format="json")
    assert answer.status_code == 401
    assert api.get("/api/comments/").json()["results"] == []


def test_unknown_comment_is_404(api, alice):
    for comment_id in (MISSING, "nope", "../../etc"):
        assert api.get(f"/api/comments/{comment_id}/").status_code == 404
        assert api.as_user(alice).put(f"/api/comments/{comment_id}/like/").status_code == 404
        assert api.as_user(alice).delete(f"/api/comments/{comment_id}/like/").status_code == 404


def test_timeline_is_newest_first_with_cursor_pagination(api, alice):
    ids = [post_comment(api, alice, f"comment {n}").json()["id"] for n in range(7)]
    seen = []
    cursor = None
    pages = 0
    while True:
        query = {"limit": 3, **({"cursor": cursor} if cursor else {})}
        page = api.get("/api/comments/", query).json()
        pages += 1
        seen += [comment["id"] for comment in page["results"]]
        cursor = page["next"]
        if cursor is None:
            break
    assert seen == list(reversed(ids))
    assert pages == 3


def test_timeline_spans_days(api, alice):
    days = ["2026-11-20T10:00:00.000000Z", "2026-11-21T09:00:00.000000Z", "2026-11-22T08:00:00.000000Z"]
    ids = []
    for day in days:
        with clock_override(ManualClock.at(day)):
            ids.append(post_comment(api, alice, day).json()["id"])
    first = api.get("/api/comments/", {"limit": 2}).json()
    assert [c["id"] for c in first["results"]] == [ids[2], ids[1]]
    second = api.get("/api/comments/", {"limit": 2, "cursor": first["next"]}).json()
    assert [c["id"] for c in second["results"]] == [ids[0]]
    assert second["next"] is None


@pytest.mark.parametrize(
    "query", [{"cursor": "garbage!!"}, {"cursor": "e30"}, {"limit": 0}, {"limit": "x"}, {"limit": 101}]
)
def test_bad_pagination_is_400(api, query):
    answer = api.get("/api/comments/", query)
    assert answer.status_code == 400
    assert set(query) & set(answer.json())


def test_replies_are_listed_under_their_parent_not_in_the_timeline(api, alice, bob):
    parent = post_comment(api, alice, "parent").json()
    reply = post_comment(api, bob, "reply", parent_id=parent["id"]).json()
    assert reply["parent_id"] == parent["id"]
    assert [c["id"] for c in api.get("/api/comments/").json()["results"]] == [parent["id"]]
    replies = api.get(f"/api/comments/{parent['id']}/replies/").json()
    assert [c["id"] for c in replies["results"]] == [reply["id"]]
    assert api.get(f"/api/comments/{MISSING}/replies/").status_code == 404


def test_hidden_comments_vanish_from_every_listing(api, alice, bob):
    parent = post_comment(api, alice, "parent").json()
    reply = post_comment(api, bob, "reply", parent_id=parent["id"]).json()
    services.comment_set_hidden(comment_id=reply["id"], hidden=True)
    assert api.get(f"/api/comments/{parent['id']}/replies/").json()["results"] == []
    assert api.get(f"/api/comments/{reply['id']}/").status_code == 404
    services.comment_set_hidden(comment_id=parent["id"], hidden=True)
    assert api.get("/api/comments/").json()["results"] == []
    assert post_comment(api, bob, "reply", parent_id=parent["id"]).status_code == 400
    services.comment_set_hidden(comment_id=parent["id"], hidden=False)
    services.comment_set_hidden(comment_id=reply["id"], hidden=False)
    assert [c["id"] for c in api.get("/api/comments/").json()["results"]] == [parent["id"]]
    assert [c["id"] for c in api.get(f"/api/comments/{parent['id']}/replies/").json()["results"]] == [reply["id"]]


# --- likes ------------------------------------------------------------------


def test_like_and_unlike_over_http(api, alice, bob):
    comment = post_comment(api, alice).json()
    url = f"/api/comments/{comment['id']}/like/"
    assert api.as_user(bob).put(url).json() == {"like_count": 1, "liked": True}
    assert api.as_user(bob).put(url).json() == {"like_count": 1, "liked": True}
    assert api.as_user(bob).get(f"/api/comments/{comment['id']}/").json()["liked"] is True
    assert api.as_user(alice).put(url).json() == {"like_count": 2, "liked": True}
    assert api.as_user(bob).delete(url).json() == {"like_count": 1, "liked": False}
    assert api.as_user(bob).delete(url).json() == {"like_count": 1, "liked": False}
    listed = api.as_user(bob).get("/api/comments/").json()["results"][0]
    assert (listed["like_count"], listed["liked"]) == (1, False)
    assert counter_value(key=counter_key(kind=LIKES, object_id=comment["id"])) == 1


def test_liking_requires_authentication(api, alice):
    comment = post_comment(api, alice).json()
    api.credentials()
    assert api.put(f"/api/comments/{comment['id']}/like/").status_code == 401
    assert list(Like.query(comment["id"])) == []


def test_liking_a_hidden_comment_is_404(api, alice, bob):
    comment = post_comment(api, alice).json()
    services.comment_set_hidden(comment_id=comment["id"], hidden=True)
    assert api.as_user(bob).put(f"/api/comments/{comment['id']}/like/").status_code == 404
    assert list(Like.query(comment["id"])) == []


def test_throttled_dynamodb_is_a_429_not_a_500(api, alice):
    from botocore.exceptions import ClientError

    from project.dynamo import wire

    def throttled(self, operation_name, api_params):
        raise ClientError(
            {"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "slow down"}}, operation_name
        )

    api.as_user(alice)
    with mock.patch.object(wire, "make_api_call", throttled):
        answer = api.get("/api/comments/")
    assert answer.status_code == 429
    assert answer["Retry-After"]


# --- schema and docs ----------------------------------------------------------


def test_openapi_schema_and_docs_are_served_without_a_cdn(client):
    schema = client.get("/api/schema/")
    assert schema.status_code == 200
    text = schema.content.decode()
    for path in ("/api/comments/", "/api/comments/{comment_id}/like/", "/api/users/", "/api/auth/token/"):
        assert path in text
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    page = docs.content.decode()
    assert "swagger-ui" in page
    assert "cdn" not in page.lower()
    from django.contrib.staticfiles import finders

    assert finders.find("drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js")
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js" in page


def test_every_error_answer_has_one_shape(api, alice):
    invalid = api.get("/api/comments/", {"limit": 0}).json()
    assert invalid["code"] == "invalid"
    assert invalid["detail"].startswith("limit:")
    assert invalid["limit"]
    assert api.post("/api/comments/", {"body": "x"}, format="json").json()["code"] == "not_authenticated"
    assert api.get(f"/api/comments/{MISSING}/").json() == {"detail": "No such comment.", "code": "not_found"}
    too_long = api.as_user(alice).post("/api/comments/", {"body": "x" * 2001}, format="json").json()
    assert too_long["code"] == "invalid" and "body" in too_long


def test_schema_documents_the_error_answers(client):
    import yaml

    schema = yaml.safe_load(client.get("/api/schema/").content)
    like = schema["paths"]["/api/comments/{comment_id}/like/"]["put"]["responses"]
    assert {"200", "400", "401", "404", "408", "409", "429", "503"} <= set(like)
    assert "Retry-After" in like["503"]["description"]
    assert "408" not in schema["paths"]["/api/comments/"]["get"]["responses"]  # no body, no body deadline
    assert like["404"]["content"]["application/json"]["schema"]["$ref"].endswith("/Error")
    signup = schema["paths"]["/api/users/"]["post"]["responses"]
    assert "201" in signup and "401" not in signup


@pytest.mark.django_db(transaction=True)
def test_first_comments_of_a_day_from_concurrent_processes_all_show(alice, bob):
    """Two writers racing to record a new day (each with an empty day cache, as two
    processes would be) agree on its shard count, and both comments are listed."""
    from project.testing.harness import in_threads
    from social import selectors

    def post(index):
        user = (alice, bob)[index]
        return comment_create(author_id=str(user.pk), body=f"from {user.username}").comment_id

    with clock_override(ManualClock.at("2026-11-23T09:00:00.000000Z")):
        posted = in_threads(post, 2)
    services._day_shards.clear()
    listed = [comment.id for comment in selectors.comment_timeline(viewer_id=None).results]
    assert sorted(listed) == sorted(posted)


def test_a_crash_after_recording_the_day_leaves_the_timeline_intact(api, alice):
    """comment_create records the day before it writes the comment: dying in between
    leaves an empty day, which the timeline walks past."""
    from project.dynamo import wire

    kept = post_comment(api, alice, "yesterday's").json()
    real = wire.make_api_call

    def crash_on_transaction(self, operation_name, api_params):
        if operation_name == "TransactWriteItems":
            raise ConnectionError("process died")
        return real(self, operation_name, api_params)

    with (
        clock_override(ManualClock.at("2099-01-01T00:00:00.000000Z")),
        mock.patch.object(wire, "make_api_call", crash_on_transaction),
        pytest.raises(ConnectionError),
    ):
        comment_create(author_id=str(alice.pk), body="lost")
    page = api.get("/api/comments/").json()
    assert [comment["id"] for comment in page["results"]] == [kept["id"]]
    assert page["next"] is None


def test_a_day_recorded_with_another_shard_count_keeps_its_count(api, alice, settings):
    """The first writer of a day fixes its shard count; a process with another
    TIMELINE_DAY_SHARDS setting writes into that day's shards, so nothing is unlisted."""
    from social.models import TimelineDay
    from social.selectors import TIMELINE_BUCKET

    TimelineDay(TIMELINE_BUCKET, "20261124", shards=2).save()
    settings.TIMELINE_DAY_SHARDS = 10
    with clock_override(ManualClock.at("2026-11-24T09:00:00.000000Z")):
        ids = {post_comment(api, alice, f"comment {n}").json()["id"] for n in range(12)}
    assert TimelineDay.get(TIMELINE_BUCKET, "20261124").shards == 2
    assert {c["id"] for c in api.get("/api/comments/", {"limit": 50}).json()["results"]} == ids
