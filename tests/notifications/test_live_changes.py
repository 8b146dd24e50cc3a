"""GET /api/live/ with If-None-Match: a poll that nothing it follows changed since is a 304 that
reads nothing of the viewer's; the change log (social/live.py) says when to read again."""

import time
from contextlib import contextmanager
from unittest import mock

import pytest

from actions.comments import comment_create
from notifications.models import LikeEvent
from project.clock import ManualClock, clock_override
from project.dynamo import wire
from project.testing.harness import wait_for
from social import live
from social.models import LiveChange
from tests.notifications.helpers import like, post, uid

pytestmark = pytest.mark.django_db(transaction=True)

READS = {"GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems"}


@contextmanager
def dynamodb_reads():
    """The read calls made meanwhile, as (operation, table, strongly consistent) triples."""
    calls = []
    real = wire.make_api_call

    def counting(self, operation, params):
        if operation in READS:
            table = params.get("TableName") or ",".join(params.get("RequestItems", {}))
            calls.append((operation, table, bool(params.get("ConsistentRead"))))
        return real(self, operation, params)

    with mock.patch.object(wire, "make_api_call", counting):
        yield calls


@pytest.fixture
def manual():
    with clock_override(ManualClock(time.time())) as clock:
        yield clock


def poll(client, comments=(), etag=None, hearts=False):
    query = "?comments=" + ",".join(comments) + ("&hearts=1" if hearts else "") if comments else ""
    headers = {"HTTP_IF_NONE_MATCH": etag} if etag else {}
    answer = client.get(f"/api/live/{query}", **headers)
    assert answer.status_code in (200, 304), answer.content
    assert answer["X-Poll-Interval"] == "2"
    assert answer["Cache-Control"] == "private, no-cache"
    return answer


def test_an_unchanged_poll_is_a_304_that_reads_nothing_of_the_viewers(api, people, manual):
    author = people["author"]
    first, second = post(author, "first"), post(author, "second")
    like(people["alice"], first)
    manual.advance(5)  # an eventually consistent answer vouches for what was signalled LIVE_SIGNAL_LAG before it
    client = api.as_user(author)
    answer = poll(client, [first, second], hearts=True)
    assert answer.status_code == 200
    assert answer.json() == {
        "unread_count": 1,
        "like_counts": {first: 1, second: 0},
        "liked": {first: False, second: False},
    }

    etag = answer["ETag"]
    for _ in range(3):
        manual.advance(2)
        with dynamodb_reads() as reads:
            answer = poll(client, [first, second], etag=etag, hearts=True)
        assert answer.status_code == 304
        assert answer.content == b""
        assert [table for _, table, _ in reads if not table.endswith("live_changes")] == []
        assert len(reads) <= 1  # at most the process's one refresh of the change log (1 part)
        assert answer["ETag"] != etag  # the cursor moves on with the log
        etag = answer["ETag"]


def test_the_log_is_read_at_most_once_per_refresh_period_whoever_polls(api, people, manual):
    comment = post(people["author"])
    etags = {}
    clients = {name: api.__class__() for name in ("alice", "bob", "carol")}
    for name, client in clients.items():
        from rest_framework.authtoken.models import Token

        client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.get_or_create(user=people[name])[0].key}")
        etags[name] = poll(client, [comment])["ETag"]
    manual.advance(2)
    with dynamodb_reads() as reads:
        statuses = [poll(client, [comment], etag=etags[name]).status_code for name, client in clients.items()]
    assert statuses == [304, 304, 304]
    assert len(reads) == 1


def test_a_folded_like_answers_200_with_the_new_count_then_304_again(api, people, manual):
    author = people["author"]
    comment = post(author)
    client = api.as_user(author)
    etag = poll(client, [comment])["ETag"]

    like(people["alice"], comment)  # committed and folded: the fold signals the count and the badge
    manual.advance(1)
    with dynamodb_reads() as reads:
        answer = poll(client, [comment], etag=etag)

    assert answer.status_code == 200
    assert answer.json()["like_counts"] == {comment: 1}
    assert answer.json()["unread_count"] == 1
    # Read strongly: the signal says it changed, and an eventually consistent read may be a second old.
    assert any(op == "Query" and table.endswith("_counters") and strong for op, table, strong in reads), reads
    manual.advance(2)
    # The signal that made it read is not read again: the answer named what it read strongly.
    assert poll(client, [comment], etag=answer["ETag"]).status_code == 304


def test_a_like_reaches_an_anonymous_page_too(api, people, manual):
    comment = post(people["author"])
    etag = poll(api, [comment])["ETag"]
    like(people["alice"], comment)
    manual.advance(1)

    answer = poll(api, [comment], etag=etag)

    assert answer.status_code == 200
    assert answer.json() == {"unread_count": None, "like_counts": {comment: 1}, "liked": {}}


def test_a_reply_to_the_viewer_moves_the_badge(api, people, manual):
    author = people["author"]
    comment = post(author)
    client = api.as_user(author)
    etag = poll(client)["ETag"]

    comment_create(author_id=uid(people["bob"]), body="A reply", parent_id=comment)
    manual.advance(1)
    answer = poll(client, etag=etag)

    assert answer.status_code == 200
    assert answer.json()["unread_count"] == 1


def test_mark_read_in_one_browser_reaches_the_others_poll(api, people, manual):
    author = people["author"]
    comment = post(author)
    like(people["alice"], comment)
    other_browser = api.as_user(author)
    etag = poll(other_browser, [comment])["ETag"]
    assert poll(other_browser, [comment]).json()["unread_count"] == 1

    assert api.as_user(author).post("/api/notifications/read-all/").status_code == 200
    manual.advance(1)
    answer = poll(other_browser, [comment], etag=etag)

    assert answer.status_code == 200
    assert answer.json()["unread_count"] == 0


def test_a_cursor_older_than_live_full_every_gets_a_full_answer(api, people, manual, settings):
    comment = post(people["author"])
    client = api.as_user(people["author"])
    etag = poll(client, [comment])["ETag"]
    manual.advance(settings.LIVE_FULL_EVERY - 1)
    etag = poll(client, [comment], etag=etag)["ETag"]  # nothing changed: 304, its full answer still recent
    manual.advance(2)

    answer = poll(client, [comment], etag=etag)

    assert answer.status_code == 200
    assert answer.json()["like_counts"] == {comment: 0}


@pytest.mark.parametrize(
    "header",
    [
        "*",
        "",
        "garbage",
        '"1.2"',
        '"zz.zz.00000000"',
        'W/"1.2.3.4"',
        '"' + "f" * 400 + '"',
        '"1.2.00000000.3.zzzzzz"',
        '"-1.-2.00000000"',
        '"1.2.3", "4.5.6"',
        "\u00e9t\u00e9",
    ],
)
def test_a_bad_if_none_match_gets_a_full_answer_never_an_error(api, people, manual, header):
    comment = post(people["author"])

    answer = api.as_user(people["author"]).get(f"/api/live/?comments={comment}", HTTP_IF_NONE_MATCH=header)

    assert answer.status_code == 200
    assert answer.json()["like_counts"] == {comment: 0}


def test_another_viewers_cursor_gets_a_full_answer(api, people, manual):
    comment = post(people["author"])
    like(people["alice"], comment)
    anonymous_etag = poll(api, [comment])["ETag"]
    manual.advance(1)

    answer = poll(api.as_user(people["author"]), [comment], etag=anonymous_etag)

    assert answer.status_code == 200
    assert answer.json()["unread_count"] == 1


def test_a_failed_signal_put_fails_neither_the_fold_nor_the_like(api, people, manual):
    author = people["author"]
    comment = post(author)
    failures = live.signal_failures

    with mock.patch.object(LiveChange, "save", side_effect=RuntimeError("injected")):
        live.live_signal([live.live_comment(comment)])
        like(people["alice"], comment)

    assert live.signal_failures > failures
    # The like and its notification are there; a page polling in full sees them.
    answer = poll(api.as_user(author), [comment])
    assert answer.json()["like_counts"] == {comment: 1}
    assert answer.json()["unread_count"] == 1


def test_a_fold_whose_signal_and_delete_request_fails_is_completed_by_the_next(api, people, manual):
    """The fold puts its signal in the request that deletes its events: that request failing leaves
    the events, and the next fold finds the notification done, signals and deletes them."""
    author = people["author"]
    comment = post(author)
    real = wire.make_api_call
    failed = []

    def fail_the_first_signal_write(client, operation_name, api_params):
        if operation_name == "BatchWriteItem" and LiveChange.Meta.table_name in api_params["RequestItems"]:
            if not failed:
                failed.append(api_params)
                raise RuntimeError("injected")
        return real(client, operation_name, api_params)

    with mock.patch.object(wire, "make_api_call", fail_the_first_signal_write):
        like(people["alice"], comment)  # the folder's second pass completes the fold

    assert failed and not list(LikeEvent.query(comment, consistent_read=True))
    answer = poll(api.as_user(author), [comment])
    assert answer.json()["like_counts"] == {comment: 1}
    assert answer.json()["unread_count"] == 1
    assert any(live.live_comment(comment) in change.ids for change in LiveChange.scan())


def test_a_page_cursor_is_honoured_and_a_like_after_it_is_shown(api, people, manual):
    author = people["author"]
    comment = post(author)
    client = api.as_user(author)
    page_etag = live.page_cursor(user_id=uid(author))
    manual.advance(2)
    assert poll(client, [comment], etag=page_etag).status_code == 304

    like(people["alice"], comment)
    manual.advance(1)
    assert poll(client, [comment], etag=page_etag).json()["like_counts"] == {comment: 1}


def test_a_refresh_that_fails_leaves_polls_answered_in_full(api, people, manual):
    comment = post(people["author"])
    client = api.as_user(people["author"])
    etag = poll(client, [comment])["ETag"]
    manual.advance(2)
    etag = poll(client, [comment], etag=etag)["ETag"]

    manual.advance(5)  # past LIVE_LOG_REFRESH + LIVE_SIGNAL_LAG: the log no longer vouches
    with mock.patch.object(LiveChange, "query", side_effect=RuntimeError("injected")):
        answer = poll(client, [comment], etag=etag)

    assert answer.status_code == 200


@pytest.mark.usefixtures("aws_read_lag")
def test_under_the_read_lag_a_change_still_shows_and_stays(api, people):
    """AWS's read lag (eventually consistent reads up to 2 s behind, the log's Query among them):
    a page following with its ETags, as live.js does, sees the like and never loses it."""
    author = people["author"]
    comment = post(author)
    client = api.as_user(author)
    state = {"etag": poll(client, [comment])["ETag"], "count": 0, "seen": []}
    like(people["alice"], comment)

    def follow() -> bool:
        answer = poll(client, [comment], etag=state["etag"])
        state["etag"] = answer["ETag"]
        if answer.status_code == 200:
            state["count"] = answer.json()["like_counts"][comment]
        state["seen"].append(state["count"])
        return state["count"] == 1

    wait_for(follow, what="the like on the page")
    for _ in range(5):
        follow()
    assert state["seen"][-6:] == [1] * 6


def test_a_heart_given_in_another_tab_shows_and_only_changed_hearts_are_read(api, people, manual):
    author, alice = people["author"], people["alice"]
    first, second = post(author, "first"), post(author, "second")
    like(people["bob"], first)
    manual.advance(5)
    tab = api.as_user(alice)
    answer = poll(tab, [first, second], hearts=True)
    assert answer.json()["liked"] == {first: False, second: False}  # unconditional: every heart

    like(alice, second)  # in another tab (helpers.like folds: the fold signals the count)
    manual.advance(1)
    answer = poll(tab, [first, second], etag=answer["ETag"], hearts=True)

    assert answer.status_code == 200
    assert answer.json()["like_counts"] == {first: 1, second: 1}
    assert answer.json()["liked"] == {second: True}  # the first's heart did not move: the page keeps it


def test_a_count_no_signal_touched_is_served_again_and_the_changed_one_is_read(people, manual):
    from rest_framework.authtoken.models import Token
    from rest_framework.test import APIClient

    first, second = post(people["author"], "first"), post(people["author"], "second")
    like(people["bob"], second)
    manual.advance(5)
    tabs = {}
    for name in ("alice", "carol"):
        tabs[name] = APIClient()
        token = Token.objects.get_or_create(user=people[name])[0].key
        tabs[name].credentials(HTTP_AUTHORIZATION=f"Token {token}")
    etags = {name: poll(tab, [first, second])["ETag"] for name, tab in tabs.items()}

    like(people["dave"], first)
    manual.advance(1)
    answers = {}
    with dynamodb_reads() as reads:
        for name, tab in tabs.items():
            answers[name] = poll(tab, [first, second], etag=etags[name])

    for answer in answers.values():
        assert answer.status_code == 200
        assert answer.json()["like_counts"] == {first: 1, second: 1}
    counter_reads = [strong for op, table, strong in reads if table.endswith("_counters")]
    assert counter_reads == [True, True]  # the changed count, exactly, per viewer; the other one shared
    manual.advance(2)
    for name, tab in tabs.items():
        assert poll(tab, [first, second], etag=answers[name]["ETag"]).status_code == 304
