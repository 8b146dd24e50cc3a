"""A timeline page merges the write shards of each day (`<day>#<n>`): newest first, nothing
skipped or repeated across pages, however the comments fall on the shards, and it reads about
a page of comments, not a page from every shard (on AWS a Query costs what it returns)."""

from unittest import mock

import pytest

from actions.comments import comment_create
from project.dynamo import wire
from social import selectors, services

pytestmark = pytest.mark.django_db


def _walk(limit: int) -> list[str]:
    """Every comment id of the timeline, page after page of `limit`."""
    seen, cursor = [], None
    while True:
        page = selectors.comment_timeline(viewer_id=None, cursor=cursor, limit=limit)
        seen += [view.id for view in page.results]
        cursor = page.next_cursor
        if cursor is None:
            return seen


@pytest.fixture
def comments_read():
    """How many comments the timeline index's Queries returned."""
    real = wire.make_api_call
    read = {"items": 0}

    def spy(self, operation_name, api_params):
        answer = real(self, operation_name, api_params)
        if operation_name == "Query" and api_params.get("IndexName") == "timeline":
            read["items"] += answer["Count"]
        return answer

    with mock.patch.object(wire, "make_api_call", spy):
        yield read


def test_pages_of_any_size_list_every_comment_once_newest_first(alice, comments_read):
    posted = [comment_create(author_id=str(alice.pk), body=f"Comment {n}").comment_id for n in range(120)]
    newest_first = list(reversed(posted))
    for limit in (7, 20, 100):
        assert _walk(limit) == newest_first, limit

    comments_read["items"] = 0
    page = selectors.comment_timeline(viewer_id=None, limit=20)
    assert [view.id for view in page.results] == newest_first[:20]
    # 10 shards each asked for a share of the page, and the shards that may hold more of it
    # asked again: well under a page from every shard (10 x 21), whatever the spread.
    assert comments_read["items"] <= 100


def test_a_day_whose_comments_all_fell_on_one_shard_pages_the_same(alice, monkeypatch, comments_read):
    monkeypatch.setattr(services, "timeline_key", lambda *, day, comment_id, shards: f"{day}#3")
    posted = [comment_create(author_id=str(alice.pk), body=f"Comment {n}").comment_id for n in range(45)]
    newest_first = list(reversed(posted))
    for limit in (1, 4, 20, 44, 45, 46):
        assert _walk(limit) == newest_first, limit
