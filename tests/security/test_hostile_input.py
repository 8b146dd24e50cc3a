"""Malformed requests are the documented JSON errors, never a 5xx."""

import base64
import json

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError
from pynamodb.exceptions import QueryError

from actions.comments import comment_create
from project.errors import dynamo_answer

pytestmark = pytest.mark.django_db


def deep_json(levels: int) -> str:
    return "[" * levels + "]" * levels


@pytest.mark.parametrize("path", ["/api/users/", "/api/auth/token/", "/api/comments/", "/api/notifications/read/"])
def test_json_nested_1000_levels_is_a_400(api, make_user, path):
    api.as_user(make_user())
    answer = api.post(path, deep_json(1000), content_type="application/json")
    assert answer.status_code == 400
    assert answer.json()["code"] == "parse_error"
    assert "nested" in answer.json()["detail"]


def test_json_within_the_depth_limit_is_parsed(api):
    body = json.dumps({"username": "ok", "password": "x", "extra": [[[["deep but fine"]]]]})
    answer = api.post("/api/users/", body, content_type="application/json")
    assert answer.status_code == 400
    assert answer.json()["extra"] == ["Unknown field."]


def test_a_body_over_the_upload_limit_is_a_json_413(api, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    answer = api.post("/api/users/", json.dumps({"username": "x" * 20_000}), content_type="application/json")
    assert answer.status_code == 413
    assert answer["Content-Type"] == "application/json"
    assert answer.json()["code"] == "too_large"


def test_a_form_body_over_the_upload_limit_is_a_json_413(api, make_user, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    api.as_user(make_user())
    answer = api.post("/api/comments/", {"body": "x" * 20_000})
    assert answer.status_code == 413
    assert answer.json()["code"] == "too_large"


def test_more_than_the_form_field_limit_is_a_json_400(api, make_user):
    api.as_user(make_user())
    body = "&".join(f"f{i}=1" for i in range(1100))
    answer = api.post("/api/comments/", body, content_type="application/x-www-form-urlencoded")
    assert answer.status_code == 400
    assert answer["Content-Type"] == "application/json"
    assert answer.json()["code"] == "too_many_fields"


def test_an_unsupported_media_type_is_a_json_415(api, make_user):
    api.as_user(make_user())
    answer = api.post("/api/comments/", "body", content_type="text/x-unknown")
    assert answer.status_code == 415
    assert set(answer.json()) >= {"detail", "code"}


def _client_error(code: str) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": "m"}}, "Query")


def test_dynamodb_validation_errors_are_bad_input_not_an_outage():
    assert dynamo_answer(_client_error("ValidationException"))[0] == 400
    wrapped = QueryError("Failed to query items", cause=_client_error("ValidationException"))
    assert dynamo_answer(wrapped)[0] == 400
    assert dynamo_answer(_client_error("ProvisionedThroughputExceededException"))[0] == 429
    assert dynamo_answer(EndpointConnectionError(endpoint_url="http://x"))[0] == 503
    assert dynamo_answer(_client_error("InternalServerError"))[0] == 503
    assert dynamo_answer(ValueError("not dynamo")) is None


def test_a_dynamodb_validation_error_in_an_api_view_is_a_400_without_retry_after(api, monkeypatch):
    from social import selectors

    def refuse(**kwargs):
        raise QueryError("Failed to query items", cause=_client_error("ValidationException"))

    monkeypatch.setattr(selectors, "comment_timeline", refuse)
    answer = api.get("/api/comments/")
    assert answer.status_code == 400
    assert answer.json()["code"] == "invalid"
    assert "Retry-After" not in answer


def test_a_dynamodb_validation_error_in_a_page_is_a_400_page(client, monkeypatch):
    from social import selectors

    def refuse(**kwargs):
        raise QueryError("Failed to query items", cause=_client_error("ValidationException"))

    monkeypatch.setattr(selectors, "comment_timeline", refuse)
    assert client.get("/").status_code == 400


def test_staff_ranking_lookup_of_3000_characters_is_a_message_not_a_500(client, make_user):
    client.force_login(make_user("staff", is_staff=True))
    for kind in ("likes", "views"):
        answer = client.get("/admin/dynamo/rankings/", {"kind": kind, "comment": "x" * 3000})
        assert answer.status_code == 200
        assert "Not a comment id" in answer.content.decode()


def test_staff_counter_shards_for_a_3000_character_id_is_a_message(client, make_user):
    client.force_login(make_user("staff", is_staff=True))
    answer = client.post("/admin/dynamo/rankings/shards/", {"kind": "likes", "comment": "x" * 3000, "shards": "2"})
    assert answer.status_code == 302


def b64(payload) -> str:
    return base64.urlsafe_b64encode(json.dumps(payload).encode()).decode().rstrip("=")


def test_old_style_unsigned_cursor_never_reaches_dynamodb(api, make_user):
    """Forged cursors: base64 JSON with values DynamoDB refuses."""
    user = make_user()
    comment = comment_create(author_id=str(user.pk), body="hi")
    api.as_user(user)
    forged = {
        "/api/comments/": b64({"day": "x" * 1100, "before": "y"}),
        f"/api/comments/{comment.comment_id}/replies/": b64({"after": "z" * 1100}),
        "/api/notifications/": b64([0, -1, "x" * 1100]),
    }
    for path, cursor in forged.items():
        answer = api.get(path, {"cursor": cursor})
        assert answer.status_code == 400, path
        assert answer.json()["code"] == "invalid_cursor", answer.json()
        assert "cursor" in answer.json()
