"""Write limits per account, enforced in the services: the API, the pages and the admin share them.

Each test turns the limits on (tests/settings.py lifts them) with small rules; "another
process" is simulated by dropping this process's memory of the store, which changes
nothing: the counts live in DynamoDB.
"""

import threading
import time
from datetime import timedelta
from unittest import mock

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone

from actions.comments import comment_create
from actions.likes import LikeState, like_add
from notifications import services as notification_services
from project.clock import ManualClock, clock_override
from project.dynamo import wire
from project.errors import RateLimited
from project.limits.store import limits_forget_memory
from social.models import Comment, Like
from tests.trust import established

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("aws_read_lag")]

PASSWORD = "pw-Secret-123"


@pytest.fixture(autouse=True)
def frozen_clock():
    """Time stands still (at the real now, so new accounts are new): no window ends mid-test."""
    with clock_override(ManualClock(time.time())) as frozen:
        yield frozen


@pytest.fixture
def limit(settings):
    settings.RATE_LIMITS_ENABLED = True

    def set_limit(name: str, rules: str, new_rules: str = ""):
        settings.RATE_LIMITS = {**settings.RATE_LIMITS, name: (rules, new_rules)}

    return set_limit


@pytest.fixture
def old_user(make_user):
    """An established account, a month old (the normal rules apply)."""

    def make(name, **kwargs):
        user = make_user(name, **kwargs)
        get_user_model().objects.filter(pk=user.pk).update(date_joined=timezone.now() - timedelta(days=30))
        return established(user)

    return make


def _like_rows(comment_id: str) -> list[str]:
    return [like.user_id for like in Like.query(comment_id)]


def _comments_by(user) -> list[Comment]:
    return [comment for comment in Comment.scan(consistent_read=True) if comment.author_id == str(user.pk)]


def test_comments_over_the_limit_answer_429_with_retry_after_and_write_nothing(api, old_user, limit):
    limit("comment", "3/min,100/day")
    ann = old_user("ann")
    client = api.as_user(ann)
    statuses = []
    for n in range(5):
        statuses.append(client.post("/api/comments/", {"body": f"Post {n}"}, format="json").status_code)
        limits_forget_memory()  # each request on another process
    assert statuses == [201, 201, 201, 429, 429]
    refused = client.post("/api/comments/", {"body": "Again"}, format="json")
    assert refused.json()["code"] == "rate_limited" and "wait" in refused.json()["detail"]
    assert 0 < int(refused.headers["Retry-After"]) <= 60
    assert len(_comments_by(ann)) == 3


def test_the_page_form_shares_the_limit_and_keeps_the_text(api, client, old_user, limit):
    limit("comment", "2/min")
    ann = old_user("ann")
    api.as_user(ann).post("/api/comments/", {"body": "From the API"}, format="json")
    client.force_login(ann)
    assert client.post("/", {"body": "From the page"}).status_code == 302
    refused = client.post("/", {"body": "My carefully typed third thought"})
    assert refused.status_code == 429
    assert int(refused.headers["Retry-After"]) > 0
    page = refused.content.decode()
    assert "My carefully typed third thought</textarea>" in page and "Please wait" in page
    assert len(_comments_by(ann)) == 2


def test_replies_have_their_own_limit_on_the_comment_page(client, old_user, limit):
    limit("reply", "2/min")
    ann, bob = old_user("ann"), old_user("bob")
    parent = comment_create(author_id=str(ann.pk), body="Parent")
    client.force_login(bob)
    url = f"/c/{parent.comment_id}/"
    assert [client.post(url, {"body": f"Reply {n}"}).status_code for n in range(2)] == [302, 302]
    refused = client.post(url, {"body": "One reply too many"})
    assert refused.status_code == 429 and "One reply too many</textarea>" in refused.content.decode()
    comment_create(author_id=str(bob.pk), body="A top-level comment is another budget")


def test_new_accounts_get_the_stricter_rules(api, make_user, old_user, limit):
    limit("comment", "3/min", "1/min")
    fresh = api.as_user(make_user("newbie"))
    assert fresh.post("/api/comments/", {"body": "Hello"}, format="json").status_code == 201
    assert fresh.post("/api/comments/", {"body": "Hello again"}, format="json").status_code == 429
    seasoned = Client()
    seasoned.force_login(old_user("veteran"))
    assert [seasoned.post("/", {"body": f"Hi {n}"}).status_code for n in range(4)] == [302, 302, 302, 429]


def test_like_unlike_toggles_are_limited(api, old_user, limit):
    limit("like", "4/min")
    ann, bob = old_user("ann"), old_user("bob")
    comment = comment_create(author_id=str(ann.pk), body="Likeable")
    client = api.as_user(bob)
    url = f"/api/comments/{comment.comment_id}/like/"
    statuses = [(client.put if n % 2 == 0 else client.delete)(url).status_code for n in range(6)]
    assert statuses == [200, 200, 200, 200, 429, 429]
    with pytest.raises(RateLimited):
        like_add(comment_id=comment.comment_id, user_id=str(bob.pk))


def test_a_likes_budget_is_counted_while_its_comment_is_read(old_user, limit):
    """The like's limit write and its comment read run at the same time: each waits at a
    barrier for the other, which only two concurrent calls can pass (a sequential pair would
    break it after the timeout and fail the like)."""
    limit("like", "4/min")
    ann, bob = old_user("ann"), old_user("bob")
    comment = comment_create(author_id=str(ann.pk), body="Likeable")
    barrier = threading.Barrier(2, timeout=30)
    met = []
    real = wire.make_api_call

    def spy(self, operation_name, api_params):
        table = api_params.get("TableName", "")
        if (operation_name, table.rsplit("_", 1)[-1]) in {("GetItem", "comments"), ("UpdateItem", "limits")}:
            barrier.wait()
            met.append(operation_name)
        return real(self, operation_name, api_params)

    with mock.patch.object(wire, "make_api_call", spy):
        assert like_add(comment_id=comment.comment_id, user_id=str(bob.pk)) == LikeState(1, True)
    assert sorted(met) == ["GetItem", "UpdateItem"]


def test_a_like_over_its_budget_is_refused_on_any_comment_and_writes_nothing(old_user, limit):
    limit("like", "1/min")
    ann, bob = old_user("ann"), old_user("bob")
    comment = comment_create(author_id=str(ann.pk), body="Likeable")
    assert like_add(comment_id=comment.comment_id, user_id=str(bob.pk)) == LikeState(1, True)
    other = comment_create(author_id=str(ann.pk), body="Another")
    for comment_id in (other.comment_id, "00000000-0000-4000-8000-000000000000"):
        with pytest.raises(RateLimited):
            like_add(comment_id=comment_id, user_id=str(bob.pk))
    assert _like_rows(other.comment_id) == []


def test_the_no_javascript_like_button_says_why(client, old_user, limit):
    limit("like", "1/min")
    ann, bob = old_user("ann"), old_user("bob")
    comment = comment_create(author_id=str(ann.pk), body="Likeable")
    client.force_login(bob)
    client.post(f"/c/{comment.comment_id}/like/", {"action": "like"})
    answer = client.post(f"/c/{comment.comment_id}/like/", {"action": "unlike"}, follow=True)
    assert "You are doing that too often" in answer.content.decode()


def test_mark_read_is_limited(api, old_user, limit):
    limit("mark_read", "2/min")
    client = api.as_user(old_user("ann"))
    statuses = [client.post("/api/notifications/read-all/").status_code for _ in range(3)]
    assert statuses == [200, 200, 429]
    assert client.post("/api/notifications/read/", {"entry_ids": ["x"]}, format="json").status_code == 429
    with pytest.raises(RateLimited):
        notification_services.inbox_mark_all_read(user_id=str(get_user_model().objects.get(username="ann").pk))


def test_sign_ups_per_address_share_one_limit_on_the_api_and_the_page(api, client, limit):
    limit("signup", "2/hour")
    first = api.post("/api/users/", {"username": "a1", "password": PASSWORD}, format="json", REMOTE_ADDR="10.5.5.5")
    form = {"username": "a2", "password1": PASSWORD, "password2": PASSWORD, "display_name": "Second"}
    second = client.post("/accounts/signup/", form, REMOTE_ADDR="10.5.5.5")
    assert (first.status_code, second.status_code) == (201, 302)
    client.logout()
    form = {"username": "a3", "password1": PASSWORD, "password2": PASSWORD, "display_name": "Kept name"}
    refused = client.post("/accounts/signup/", form, REMOTE_ADDR="10.5.5.5")
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
    assert 'value="a3"' in refused.content.decode() and 'value="Kept name"' in refused.content.decode()
    api_refused = api.post(
        "/api/users/", {"username": "a4", "password": PASSWORD}, format="json", REMOTE_ADDR="10.5.5.5"
    )
    assert api_refused.status_code == 429 and "Retry-After" in api_refused.headers
    other = api.post("/api/users/", {"username": "a5", "password": PASSWORD}, format="json", REMOTE_ADDR="10.5.5.6")
    assert other.status_code == 201
    assert sorted(get_user_model().objects.values_list("username", flat=True)) == ["a1", "a2", "a5"]


def test_delivery_creation_is_limited_on_the_api_and_the_admin(api, client, old_user, limit):
    limit("delivery", "1/hour")
    boss = old_user("boss", is_staff=True)
    payload = {"title": "Hello", "body": "Everyone", "audience": {"all": True}}
    assert api.as_user(boss).post("/api/deliveries/", payload, format="json").status_code == 201
    refused = api.post("/api/deliveries/", payload, format="json")
    assert refused.status_code == 429 and int(refused.headers["Retry-After"]) > 0
    client.force_login(boss)
    page = client.post(
        "/admin/dynamo/deliveries/new/", {"title": "Typed title", "body": "Typed body", "url": "", "audience": "all"}
    )
    assert page.status_code == 429
    assert 'value="Typed title"' in page.content.decode() and "Typed body" in page.content.decode()
