"""List pages read like counts eventually consistently, except the counts of the comments this
browser just liked or unliked (the `fresh_likes` cookie the like's answer sets): the person
sees their own like in the count on the page they land on."""

from unittest import mock

import pytest

from actions.comments import comment_create
from project.dynamo import wire
from project.http.fresh import FRESH_LIKES
from social.counters import LIKES, REACTIONS, counter_key

pytestmark = pytest.mark.django_db

COOKIE, FRESH_MAX = FRESH_LIKES.name, FRESH_LIKES.most


@pytest.fixture
def counts_read():
    """{counter key: whether its Query was strongly consistent}, for every count a page read."""
    real = wire.make_api_call
    seen: dict[str, bool] = {}

    def spy(self, operation_name, api_params):
        if operation_name == "Query" and api_params["TableName"].endswith("_counters"):
            key = api_params["ExpressionAttributeValues"][":0"]["S"]
            seen[key] = bool(api_params.get("ConsistentRead"))
        return real(self, operation_name, api_params)

    with mock.patch.object(wire, "make_api_call", spy):
        yield seen


def test_the_like_forms_redirect_names_the_comment_and_the_timeline_reads_its_count_exactly(
    client, make_user, counts_read
):
    alice, bob = make_user("alice"), make_user("bob")
    liked = comment_create(author_id=str(alice.pk), body="Liked").comment_id
    other = comment_create(author_id=str(alice.pk), body="Other").comment_id
    client.force_login(bob)

    answer = client.post(f"/c/{liked}/like/", {"action": "like", "next": "/"})
    assert answer.cookies[COOKIE].value == liked
    counts_read.clear()
    page = client.get("/")

    assert counts_read == {
        counter_key(kind=LIKES, object_id=liked): True,
        counter_key(kind=LIKES, object_id=other): False,
        # What this browser just changed may be a first reaction, which the comment's flag the
        # list read (`has_reactions`, from an index) may not show yet: its reactions are read too.
        counter_key(kind=REACTIONS, object_id=liked): True,
    }
    [shown] = [view for view in page.context["page"].results if view.id == liked]
    assert (shown.like_count, shown.liked) == (1, True)


def test_the_apis_like_and_unlike_name_the_comment_newest_first_and_at_most_a_few(client, make_user):
    alice, bob = make_user("alice"), make_user("bob")
    comments = [comment_create(author_id=str(alice.pk), body=f"c{n}").comment_id for n in range(FRESH_MAX + 1)]
    client.force_login(bob)
    for comment_id in comments:
        assert client.put(f"/api/comments/{comment_id}/like/").status_code == 200
    answer = client.delete(f"/api/comments/{comments[0]}/like/")
    assert answer.status_code == 200
    assert answer.cookies[COOKIE].value.split(".") == [comments[0], *reversed(comments[-(FRESH_MAX - 1) :])]
    assert answer.cookies[COOKIE]["max-age"] and answer.cookies[COOKIE]["httponly"]


def test_without_the_cookie_every_count_of_a_list_is_read_eventually(client, make_user, counts_read):
    alice = make_user("alice")
    first = comment_create(author_id=str(alice.pk), body="First").comment_id
    client.cookies[COOKIE] = "not-a-comment.../..;"  # a forged cookie changes nothing
    assert client.get("/").status_code == 200
    assert counts_read == {counter_key(kind=LIKES, object_id=first): False}
    assert client.get(f"/api/comments/{first}/").json()["like_count"] == 0
    assert counts_read[counter_key(kind=LIKES, object_id=first)] is True  # one comment asked for: exact


@pytest.fixture
def like_rows_read():
    """{comment id: whether it was read strongly consistently}, for every like row a page read."""
    real = wire.make_api_call
    seen: dict[str, bool] = {}

    def spy(self, operation_name, api_params):
        if operation_name == "BatchGetItem":
            for table, request in api_params["RequestItems"].items():
                if table.endswith("_likes"):
                    seen.update(
                        (key["comment_id"]["S"], bool(request.get("ConsistentRead"))) for key in request["Keys"]
                    )
        return real(self, operation_name, api_params)

    with mock.patch.object(wire, "make_api_call", spy):
        yield seen


def test_a_list_reads_the_viewers_like_rows_only_of_comments_someone_likes(client, make_user, like_rows_read):
    """A read that finds nothing costs AWS as much as one that finds a like: a comment counted 0
    has no like of the viewer's to find, so its row is not read, and the states stay right.
    Rows are read eventually consistently, except those of comments this browser just liked."""
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    quiet = comment_create(author_id=str(alice.pk), body="Nobody likes this").comment_id
    theirs = comment_create(author_id=str(alice.pk), body="Carol likes this").comment_id
    mine = comment_create(author_id=str(alice.pk), body="Bob likes this").comment_id
    client.force_login(carol)
    assert client.put(f"/api/comments/{theirs}/like/").status_code == 200
    client.force_login(bob)
    assert client.put(f"/api/comments/{mine}/like/").status_code == 200
    client.cookies.pop(COOKIE, None)  # every count of the page exact only if the count says so

    pages = {
        "page": lambda: {view.id: view.liked for view in client.get("/").context["page"].results},
        "api": lambda: {view["id"]: view["liked"] for view in client.get("/api/comments/").json()["results"]},
    }
    for read_page in pages.values():
        like_rows_read.clear()
        assert read_page() == {quiet: False, theirs: False, mine: True}
        assert like_rows_read == {theirs: False, mine: False}

    like_rows_read.clear()
    live = client.get(f"/api/live/?comments={quiet},{theirs},{mine}&hearts=1").json()
    assert like_rows_read == {theirs: False, mine: False}
    assert live["liked"] == {quiet: False, theirs: False, mine: True}

    assert client.put(f"/api/comments/{theirs}/like/").status_code == 200  # the cookie names it
    for read_page in pages.values():
        like_rows_read.clear()
        assert read_page() == {quiet: False, theirs: True, mine: True}
        assert like_rows_read == {theirs: True, mine: False}
