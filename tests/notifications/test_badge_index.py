"""A badge source at 0 leaves the sparse `by_count` index (its `count` is removed): one index
write instead of two when "mark all read" zeroes it, and the badge, read from the index, stays right."""

import pytest

from notifications import services
from notifications.models import UnreadCount
from notifications.selectors import unread_count_sources
from project.dynamo import clients as dynamo
from tests.notifications.helpers import like, post, uid

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("fold_by_the_worker", "aws_read_lag")]


def _stored(user_id: str) -> dict[str, dict]:
    """The raw `unread_counts` items of a user, by source."""
    answer = dynamo.client().query(
        TableName=UnreadCount.Meta.table_name,
        KeyConditionExpression="user_id = :u",
        ExpressionAttributeValues={":u": {"S": user_id}},
        ConsistentRead=True,
    )
    return {item["source"]["S"]: item for item in answer["Items"]}


def test_a_read_source_has_no_count_and_a_new_like_brings_it_back(people):
    author = people["author"]
    comment_id = post(author)
    like(people["alice"], comment_id)
    source = f"like#{comment_id}"
    assert unread_count_sources(user_id=uid(author)) == {source: 1}

    assert services.inbox_mark_all_read(user_id=uid(author)) == 1
    assert "count" not in _stored(uid(author))[source]
    assert UnreadCount.get(uid(author), source, consistent_read=True).count == 0
    assert unread_count_sources(user_id=uid(author)) == {}

    like(people["bob"], comment_id)
    assert unread_count_sources(user_id=uid(author)) == {source: 1}
    assert _stored(uid(author))[source]["count"] == {"N": "1"}
