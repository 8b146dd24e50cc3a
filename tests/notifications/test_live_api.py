"""GET /api/live/: what an open page follows (the badge and the like counts on screen)."""

import time
import uuid

import pytest

from project.clock import ManualClock, clock_override
from project.testing.harness import wait_for
from tests.notifications.helpers import like, post

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


def live(client, query, expected):
    """The live answer once it is `expected`: its reads are eventually consistent, so other
    people's changes reach it within about a second (AWS; up to 2 s under the read lag model)."""
    answer = wait_for(lambda: (got := client.get(f"/api/live/{query}")).json() == expected and got, what=str(expected))
    assert answer.status_code == 200
    return answer.json()


def test_the_author_follows_the_badge_and_the_counts_of_the_comments_shown(api, people):
    author = people["author"]
    first, second = post(author, "first"), post(author, "second")
    like(people["alice"], first)
    like(people["bob"], first)
    like(people["carol"], second)

    live(
        api.as_user(author),
        f"?comments={first},{second}",
        {
            "unread_count": 2,  # notifications: one per liked comment
            "like_counts": {first: 2, second: 1},
            "liked": {},  # the hearts only when asked (hearts=1)
        },
    )


def test_the_caller_learns_which_of_the_comments_shown_they_like(api, people):
    first, second = post(people["author"], "first"), post(people["author"], "second")
    like(people["alice"], second)

    client = api.as_user(people["alice"])
    answer = live(
        client,
        f"?comments={first},{second}&hearts=1",
        {"unread_count": 0, "like_counts": {first: 0, second: 1}, "liked": {first: False, second: True}},
    )

    assert answer["liked"] == {first: False, second: True}
    # Not asked (most polls): no hearts read.
    assert api.as_user(people["alice"]).get(f"/api/live/?comments={first},{second}").json()["liked"] == {}


def test_anonymous_pages_follow_counts_without_a_badge(api, people):
    comment = post(people["author"])
    like(people["alice"], comment)

    live(api, f"?comments={comment}", {"unread_count": None, "like_counts": {comment: 1}, "liked": {}})


def test_no_comments_asks_only_for_the_badge(api, people):
    answer = api.as_user(people["author"]).get("/api/live/")

    assert answer.json() == {"unread_count": 0, "like_counts": {}, "liked": {}}


def test_an_unknown_comment_counts_zero(api, people):
    unknown = str(uuid.uuid4())

    assert api.get(f"/api/live/?comments={unknown}").json()["like_counts"] == {unknown: 0}


@pytest.mark.parametrize(
    "query",
    [
        "comments=not-a-uuid",
        "comments=" + ",".join(str(uuid.uuid4()) for _ in range(51)),
        f"comments={uuid.uuid4()}&extra=1",
    ],
)
def test_bad_queries_answer_400_naming_the_field(api, query):
    answer = api.get(f"/api/live/?{query}")

    assert answer.status_code == 400
    assert set(answer.json()) & {"comments", "extra"}


def test_polling_has_its_own_throttle_and_answers_429_with_retry_after(api, people, settings):
    settings.RATE_LIMITS_ENABLED = True
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], "live": "3/min"},
    }
    client = api.as_user(people["author"])

    with clock_override(ManualClock(time.time())):  # no minute ends mid-test
        statuses = [client.get("/api/live/").status_code for _ in range(4)]
        retry_after = int(client.get("/api/live/").headers["Retry-After"])

    assert statuses == [200, 200, 200, 429]
    assert retry_after > 0
    assert client.get("/api/notifications/unread-count/").status_code == 200  # other APIs keep their budget
