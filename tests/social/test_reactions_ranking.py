"""The popular ranking by reactions: every reaction of a comment counts toward its total, in the
API (`?kind=reactions`) and on the page."""

import pytest

from actions.comments import comment_create
from actions.likes import like_add
from actions.reactions import reaction_add, reaction_remove
from project.testing.harness import wait_for
from social import counters, ranking
from social.counters import REACTIONS
from tests.social.helpers import aggregate

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


@pytest.fixture(autouse=True)
def quick_aggregation(settings):
    settings.COUNTER_AGGREGATION_DELAY = 0.2
    counters.counters_forget_caches()
    yield
    counters.counters_forget_caches()


def test_reactions_rank_by_their_total_over_every_name(alice, api, client):
    hugged = comment_create(author_id=str(alice.pk), body="hugged").comment_id
    liked = comment_create(author_id=str(alice.pk), body="just likes").comment_id
    mixed = comment_create(author_id=str(alice.pk), body="mixed").comment_id
    for person in ("1", "2"):
        reaction_add(comment_id=hugged, user_id=person, name="heart")
    for name in ("heart", "laugh", "eyes"):
        reaction_add(comment_id=mixed, user_id="1", name=name)
    reaction_add(comment_id=mixed, user_id="2", name="hooray")
    reaction_remove(comment_id=mixed, user_id="2", name="hooray")
    for person in ("1", "2", "3", "4", "5"):
        like_add(comment_id=liked, user_id=person)  # likes are not reactions
    aggregate(due_only=False)
    wait_for(  # the ranking index trails the totals (up to 2 s under the read lag model)
        lambda: (
            [(r.comment.id, r.total) for r in ranking.ranking_top(kind=REACTIONS, limit=10)]
            == [(mixed, 3), (hugged, 2)]
        ),
        what="the ranking by reactions",
    )
    body = api.get("/api/comments/popular/", {"kind": "reactions"}).json()
    assert body["kind"] == "reactions"
    assert [(r["comment"]["id"], r["total"]) for r in body["results"]] == [(mixed, 3), (hugged, 2)]
    assert body["results"][0]["comment"]["reactions"] == {"heart": 1, "laugh": 1, "eyes": 1}
    page = client.get("/popular/?kind=reactions").content.decode()
    assert "3 reactions" in page and "2 reactions" in page and "<strong>Most reactions</strong>" in page
    assert page.index("mixed") < page.index("hugged") and "just likes" not in page


def test_an_unknown_kind_is_a_400_naming_it(api):
    answer = api.get("/api/comments/popular/", {"kind": "hearts"})
    assert answer.status_code == 400 and "kind" in answer.json()
