"""Reactions: the API, idempotence, one of each per person, exact counts per name, 400s and 404s,
and a hot comment under AWS's transaction conflict rules."""

import random
from concurrent.futures import ThreadPoolExecutor

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from actions.comments import comment_create
from actions.reactions import reaction_add, reaction_remove
from project.errors import Conflict
from project.testing.harness import in_threads, wait_for
from social import selectors
from social.counters import REACTIONS, counter_key, counter_value
from social.models import CounterShard, Reaction
from social.reactions.names import NAMES, reaction_of_shard

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


@pytest.fixture
def comment(alice):
    return comment_create(author_id=str(alice.pk), body="Hello")


def rows(comment_id):
    return sorted(row.reactor_key for row in Reaction.query(comment_id, consistent_read=True))


def counts_by_name(comment_id):
    totals = {}
    for item in CounterShard.query(counter_key(kind=REACTIONS, object_id=comment_id), consistent_read=True):
        name = reaction_of_shard(int(item.shard))
        totals[name] = totals.get(name, 0) + int(item.count)
    return {name: count for name, count in totals.items() if count}


def url(comment_id, name):
    return f"/api/comments/{comment_id}/reactions/{name}/"


def test_react_and_take_back_through_the_api(api, comment, bob):
    client = api.as_user(bob)
    answer = client.put(url(comment.comment_id, "heart"))
    assert answer.status_code == 200
    assert answer.json() == {"reactions": {"heart": 1}, "my_reactions": ["heart"]}
    assert client.put(url(comment.comment_id, "eyes")).json() == {
        "reactions": {"heart": 1, "eyes": 1},
        "my_reactions": ["heart", "eyes"],
    }
    shown = client.get(f"/api/comments/{comment.comment_id}/").json()
    assert shown["reactions"] == {"heart": 1, "eyes": 1} and shown["my_reactions"] == ["heart", "eyes"]
    assert shown["like_count"] == 0 and shown["liked"] is False  # the like stays what it is
    # Alice's comment reaches the timeline's index within the read lag; Bob's own reactions show at once.
    listed = wait_for(lambda: (client.get("/api/comments/").json()["results"] or [None])[0], what="the comment listed")
    assert listed["reactions"] == {"heart": 1, "eyes": 1} and listed["my_reactions"] == ["heart", "eyes"]
    assert APIClient().get(f"/api/comments/{comment.comment_id}/").json()["my_reactions"] == []
    # Another browser's list: the comment's flag (`has_reactions`) has its counts read there too.
    wait_for(
        lambda: APIClient().get("/api/comments/").json()["results"][0]["reactions"] == {"heart": 1, "eyes": 1},
        what="the reactions on an anonymous list",
    )
    answer = client.delete(url(comment.comment_id, "heart"))
    assert answer.json() == {"reactions": {"eyes": 1}, "my_reactions": ["eyes"]}
    assert rows(comment.comment_id) == [f"{bob.pk}#eyes"]


def test_reacting_twice_or_taking_back_twice_changes_nothing(api, comment, bob):
    client = api.as_user(bob)
    for _ in range(2):
        assert client.put(url(comment.comment_id, "hooray")).json()["reactions"] == {"hooray": 1}
    assert rows(comment.comment_id) == [f"{bob.pk}#hooray"]
    assert counts_by_name(comment.comment_id) == {"hooray": 1}
    for _ in range(2):
        assert client.delete(url(comment.comment_id, "hooray")).json() == {"reactions": {}, "my_reactions": []}
    assert rows(comment.comment_id) == [] and counts_by_name(comment.comment_id) == {}
    assert client.delete(url(comment.comment_id, "laugh")).json() == {"reactions": {}, "my_reactions": []}


def test_an_unknown_name_is_a_400_naming_the_field_and_an_unknown_comment_a_404(api, comment, bob):
    client = api.as_user(bob)
    for method in (client.put, client.delete):
        answer = method(url(comment.comment_id, "thumbsup"))
        assert answer.status_code == 400 and "name" in answer.json()
        assert method(url("5a5b1f3c-0000-4000-8000-000000000000", "heart")).status_code == 404
        assert method(url("not-a-uuid", "heart")).status_code == 404
    assert rows(comment.comment_id) == []
    assert APIClient().put(url(comment.comment_id, "heart")).status_code in (401, 403)


def test_a_hidden_or_deleted_comment_takes_no_reaction(comment, bob):
    from social.services import comment_set_hidden

    comment_set_hidden(comment_id=comment.comment_id, hidden=True)
    from project.errors import NotFound

    with pytest.raises(NotFound):
        reaction_add(comment_id=comment.comment_id, user_id=str(bob.pk), name="heart")
    assert rows(comment.comment_id) == []


def test_counts_per_name_are_exact_under_concurrency(comment, settings, aws_conflicts):
    """Eight threads of random reactions and undoes by 10 people under AWS's conflict rules: every
    name's count is exactly its number of rows, however the shards were hit."""
    people = [f"fan{n}" for n in range(10)]

    def worker(seed):
        rng = random.Random(seed)
        for _ in range(30):
            person, name = rng.choice(people), rng.choice(NAMES[:3])
            try:
                if rng.random() < 0.6:
                    reaction_add(comment_id=comment.comment_id, user_id=person, name=name)
                else:
                    reaction_remove(comment_id=comment.comment_id, user_id=person, name=name)
            except Conflict:  # one person's add and undo of one name from two threads meet on its row
                pass

    in_threads(worker, 8)
    expected = {}
    for key in rows(comment.comment_id):
        name = key.rpartition("#")[2]
        expected[name] = expected.get(name, 0) + 1
    assert counts_by_name(comment.comment_id) == expected
    assert selectors.comment_get(comment_id=comment.comment_id, viewer_id=None).reactions.counts == {
        name: expected[name] for name in NAMES if name in expected
    }
    assert counter_value(key=counter_key(kind=REACTIONS, object_id=comment.comment_id)) == sum(expected.values())


PEOPLE = 32


@pytest.mark.slow
def test_32_people_react_take_back_and_react_again_on_one_comment_without_a_failure(make_user, aws_conflicts, settings):
    """The like's hot-comment test (test_hot_comment.py), for reactions: no item in the
    transaction is shared by two reactors, so none of them fails, and every count is exact."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    author = make_user("author")
    comment_id = comment_create(author_id=str(author.pk), body="Popular").comment_id
    tokens = [Token.objects.create(user=make_user(f"fan{n}")).key for n in range(PEOPLE)]

    def react(token):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
        answers = [
            client.put(url(comment_id, "heart")),
            client.put(url(comment_id, "hooray")),
            client.delete(url(comment_id, "heart")),
            client.put(url(comment_id, "heart")),
        ]
        return [(answer.status_code, answer.json()) for answer in answers]

    with ThreadPoolExecutor(max_workers=PEOPLE) as pool:
        results = list(pool.map(react, tokens))

    assert [status for person in results for status, _ in person] == [200] * (4 * PEOPLE)
    for (_, hearted), (_, hooray), (_, taken_back), (_, again) in results:
        assert hearted["my_reactions"] == ["heart"] and hooray["my_reactions"] == ["heart", "hooray"]
        assert taken_back["my_reactions"] == ["hooray"] and again["my_reactions"] == ["heart", "hooray"]
        assert 1 <= again["reactions"]["heart"] <= PEOPLE
    assert aws_conflicts.transactions >= 4 * PEOPLE
    shown = APIClient().get(f"/api/comments/{comment_id}/").json()
    assert shown["reactions"] == {"heart": PEOPLE, "hooray": PEOPLE}
    assert counts_by_name(comment_id) == {"heart": PEOPLE, "hooray": PEOPLE}


def test_a_list_reads_the_reactions_of_comments_that_have_some_only(comment, alice, bob):
    """A comment records its first reaction (`has_reactions`), so a list page queries the reaction
    counters of those comments alone: a page of comments nobody reacted to reads none."""
    from unittest import mock

    from project.dynamo import wire

    quiet = comment_create(author_id=str(alice.pk), body="Nobody reacts").comment_id
    reaction_add(comment_id=comment.comment_id, user_id=str(bob.pk), name="laugh")
    real = wire.make_api_call
    read: set[str] = set()

    def spy(self, operation_name, api_params):
        if operation_name == "Query" and api_params["TableName"].endswith("_counters"):
            read.add(api_params["ExpressionAttributeValues"][":0"]["S"])
        return real(self, operation_name, api_params)

    def listed() -> bool:
        read.clear()
        results = APIClient().get("/api/comments/").json()["results"]
        return {item["id"]: item["reactions"] for item in results} == {
            comment.comment_id: {"laugh": 1},
            quiet: {},
        }

    with mock.patch.object(wire, "make_api_call", spy):
        wait_for(listed, what="the list showing the reaction")  # the timeline index trails the flag
    assert counter_key(kind=REACTIONS, object_id=comment.comment_id) in read
    assert counter_key(kind=REACTIONS, object_id=quiet) not in read
