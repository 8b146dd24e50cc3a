"""Popular comments: ranking order and ties, hidden comments, the API, pages, admin and commands."""

import threading
import time

import pytest
from django.core.management import CommandError, call_command

from actions.comments import comment_create
from actions.likes import like_add
from project.clock import ManualClock, clock_override
from project.testing.harness import wait_for
from social import aggregation, counters, ranking, services
from social.counters import LIKES, VIEWS, counter_key
from social.management.commands.aggregate_counters import Command as AggregateCommand
from tests.social.helpers import aggregate, due_index_caught_up

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


@pytest.fixture(autouse=True)
def quick_aggregation(settings):
    settings.COUNTER_AGGREGATION_DELAY = 0.2
    counters.counters_forget_caches()
    yield
    counters.counters_forget_caches()


@pytest.fixture
def author(make_user):
    return make_user("author")


def ranked(kind=LIKES, limit=10, **options):
    return [(r.comment.id, r.total) for r in ranking.ranking_top(kind=kind, limit=limit, **options)]


def ranking_shows(expected, kind=LIKES, limit=10, **options):
    """Wait for the ranking to show `expected` [(comment id, total)]: its index trails the totals
    (on AWS a GSI is updated asynchronously; up to 2 s under the read lag model)."""
    wait_for(lambda: ranked(kind, limit, **options) == expected, what=f"the ranking showing {expected}")


def post_with_likes(author, body, likes):
    comment = comment_create(author_id=str(author.pk), body=body)
    for user in range(likes):
        like_add(comment_id=comment.comment_id, user_id=f"liker{user}")
    return comment


def test_ranking_orders_by_total_and_breaks_ties_by_id(author, settings):
    settings.RANKING_SHARDS = 4
    comments = {n: post_with_likes(author, f"c{n}", likes) for n, likes in enumerate([2, 5, 2, 0, 2, 1])}
    aggregate(due_only=False)
    ties = sorted([comments[0].comment_id, comments[2].comment_id, comments[4].comment_id], reverse=True)
    ranking_shows([(comments[1].comment_id, 5), *((tie, 2) for tie in ties), (comments[5].comment_id, 1)])
    ranked = ranking.ranking_top(kind=LIKES, limit=10)
    assert [r.comment.id for r in ranked] == [comments[1].comment_id, *ties, comments[5].comment_id]
    assert [r.total for r in ranked] == [5, 2, 2, 2, 1]  # no zero totals in the ranking
    assert [r.rank for r in ranked] == [1, 2, 3, 4, 5]
    assert [r.comment.id for r in ranking.ranking_top(kind=LIKES, limit=2)] == [comments[1].comment_id, ties[0]]
    assert ranking.ranking_top(kind=VIEWS, limit=10) == []


def test_ranking_follows_new_likes_after_aggregation(author):
    first = post_with_likes(author, "first", 2)
    second = post_with_likes(author, "second", 1)
    aggregate(due_only=False)
    ranking_shows([(first.comment_id, 2), (second.comment_id, 1)])
    for user in ("a", "b"):
        like_add(comment_id=second.comment_id, user_id=user)
    aggregate(due_only=False)
    ranking_shows([(second.comment_id, 3), (first.comment_id, 2)])


def test_hidden_comments_are_left_out_and_come_back_when_shown(author):
    top = post_with_likes(author, "top", 3)
    middle = post_with_likes(author, "middle", 2)
    low = post_with_likes(author, "low", 1)
    aggregate(due_only=False)
    ranking_shows([(top.comment_id, 3), (middle.comment_id, 2), (low.comment_id, 1)])
    services.comment_set_hidden(comment_id=top.comment_id, hidden=True)
    ranked = ranking.ranking_top(kind=LIKES, limit=2)
    assert [(r.rank, r.comment.id) for r in ranked] == [(1, middle.comment_id), (2, low.comment_id)]
    staff_view = ranking.ranking_top(kind=LIKES, limit=3, include_hidden=True)
    assert [r.comment.id for r in staff_view] == [top.comment_id, middle.comment_id, low.comment_id]
    assert staff_view[0].comment.hidden
    services.comment_set_hidden(comment_id=top.comment_id, hidden=False)
    assert [r.comment.id for r in ranking.ranking_top(kind=LIKES, limit=1)] == [top.comment_id]


def test_popular_api(author, api, make_user):
    first = post_with_likes(author, "first", 1)
    second = post_with_likes(author, "second", 3)
    due_index_caught_up()
    call_command("aggregate_counters", verbosity=0)
    ranking_shows([(second.comment_id, 3), (first.comment_id, 1)])
    answer = api.get("/api/comments/popular/", {"limit": 1})
    assert answer.status_code == 200
    body = answer.json()
    assert body["kind"] == "likes"
    assert [(r["rank"], r["total"], r["comment"]["id"]) for r in body["results"]] == [(1, 3, second.comment_id)]
    assert body["results"][0]["comment"]["like_count"] == 3
    assert body["results"][0]["aggregated_at"]
    viewer = make_user("viewer")
    like_add(comment_id=first.comment_id, user_id=str(viewer.pk))
    mine = api.as_user(viewer).get("/api/comments/popular/?kind=likes&limit=5").json()["results"]
    assert [r["comment"]["liked"] for r in mine] == [False, True]
    assert [r["comment"]["like_count"] for r in mine] == [3, 2]  # live count, before aggregation
    assert [r["total"] for r in mine] == [3, 1]  # the ranking's total catches up after it


@pytest.mark.parametrize(
    "query, field",
    [({"kind": "shares"}, "kind"), ({"limit": 0}, "limit"), ({"limit": 101}, "limit"), ({"limit": "x"}, "limit")],
)
def test_popular_api_rejects_bad_input(api, query, field):
    answer = api.get("/api/comments/popular/", query)
    assert answer.status_code == 400
    assert field in answer.json()


def test_comment_page_counts_views_and_popular_page_ranks_them(author, client):
    viewed = comment_create(author_id=str(author.pk), body="Look at me")
    other = comment_create(author_id=str(author.pk), body="Quiet one")
    for viewer in range(3):  # three viewers: one viewer's reloads count once an hour
        assert client.get(f"/c/{viewed.comment_id}/", REMOTE_ADDR=f"10.0.0.{viewer}").status_code == 200
    page = client.get(f"/c/{other.comment_id}/")
    assert b"1 view" in page.content
    key = counter_key(kind=VIEWS, object_id=viewed.comment_id)
    assert counters.counter_value(key=key) == 3
    due_index_caught_up()
    call_command("aggregate_counters", verbosity=0)
    ranking_shows([(viewed.comment_id, 3), (other.comment_id, 1)], kind=VIEWS)
    page = client.get("/popular/?kind=views")
    assert page.status_code == 200
    text = page.content.decode()
    assert text.index("Look at me") < text.index("Quiet one")
    assert "3 views" in text
    assert 'href="/popular/"' in client.get("/").content.decode()  # linked from the header
    api_answer = client.get("/api/comments/popular/?kind=views").json()
    assert [r["total"] for r in api_answer["results"]] == [3, 1]


def test_an_anonymous_ipv6_viewer_is_one_viewer_for_its_whole_64(author, client):
    """One IPv6 subscriber holds a /64 (2^64 addresses): counted by address, it could inflate a
    count (and write one limits item) per address; counted by /64, as every limit is, it is one."""
    comment = comment_create(author_id=str(author.pk), body="Seen from one home")
    for host in range(1, 6):
        client.get(f"/c/{comment.comment_id}/", REMOTE_ADDR=f"2001:db8:1:2::{host:x}")
    client.get(f"/c/{comment.comment_id}/", REMOTE_ADDR="2001:db8:1:3::1")  # another /64: another viewer
    assert counters.counter_value(key=counter_key(kind=VIEWS, object_id=comment.comment_id)) == 2


def test_missing_or_hidden_comment_page_counts_no_view(author, client):
    comment = comment_create(author_id=str(author.pk), body="soon hidden")
    services.comment_set_hidden(comment_id=comment.comment_id, hidden=True)
    assert client.get(f"/c/{comment.comment_id}/").status_code == 404
    assert counters.counter_value(key=counter_key(kind=VIEWS, object_id=comment.comment_id)) == 0
    assert aggregation.counters_pending_count() == 0


def test_admin_ranking_page_and_shard_form(author, client, make_user):
    comment = post_with_likes(author, "staff look", 2)
    aggregate(due_only=False)
    ranking_shows([(comment.comment_id, 2)])
    services.comment_set_hidden(comment_id=comment.comment_id, hidden=True)
    staff = make_user("boss", is_staff=True)
    client.force_login(staff)
    page = client.get("/admin/dynamo/rankings/", {"comment": comment.comment_id})
    assert page.status_code == 200
    text = page.content.decode()
    assert "staff look" in text and "hidden" in text
    assert "Rankings" in client.get("/admin/").content.decode()
    answer = client.post(
        "/admin/dynamo/rankings/shards/", {"kind": "likes", "comment": comment.comment_id, "shards": "16"}
    )
    assert answer.status_code == 302
    key = counter_key(kind=LIKES, object_id=comment.comment_id)
    counters.counters_forget_caches()
    assert counters.counter_shard_count(key=key) == 16
    assert counters.counter_value(key=key) == 2
    client.post("/admin/dynamo/rankings/shards/", {"kind": "likes", "comment": comment.comment_id, "shards": "0"})
    counters.counters_forget_caches()
    assert counters.counter_shard_count(key=key) == 16


def test_admin_ranking_page_is_staff_only(client, make_user):
    client.force_login(make_user("plain"))
    assert client.get("/admin/dynamo/rankings/").status_code == 302


def test_counter_shards_command(author, capsys):
    comment = post_with_likes(author, "hot", 3)
    call_command("counter_shards", "likes", comment.comment_id, "8")
    assert "8 shard(s), value 3" in capsys.readouterr().out
    with pytest.raises(CommandError):
        call_command("counter_shards", "likes", comment.comment_id, "1000")
    with pytest.raises(CommandError):
        call_command("counter_shards", "likes", "00000000-0000-0000-0000-000000000000", "4")


def test_aggregate_counters_loop_keeps_up_until_stopped(author):
    """The loop aggregates each counter once it comes due: the test moves the project's clock
    past the delay and waits (however long a busy machine takes) for the loop, not itself, to
    write the total."""
    with clock_override(ManualClock(time.time())) as clock:
        comment = post_with_likes(author, "looped", 1)
        key = counter_key(kind=LIKES, object_id=comment.comment_id)
        stop = threading.Event()
        worker = threading.Thread(target=AggregateCommand().run_loop, kwargs={"stop": stop, "poll_seconds": 0.05})
        worker.start()
        try:
            clock.advance(1.0)
            wait_for(lambda: aggregation.counter_total_get(key=key).total is not None, what="the loop aggregating")
            assert int(aggregation.counter_total_get(key=key).total) == 1
            like_add(comment_id=comment.comment_id, user_id="late")
            clock.advance(1.0)
            wait_for(lambda: int(aggregation.counter_total_get(key=key).total) == 2, what="the loop taking the like")
        finally:
            stop.set()
            worker.join()
    due_index_caught_up()
    assert aggregation.counters_pending_count() == 0
