"""The read lag model itself (project/testing/aws_read_lag.py) on DynamoDB Local.

Every write here lags exactly one second of a clock the test moves, so what a read sees
depends on no real time.
"""

import pytest

from project.dynamo import clients as dynamo
from project.testing.aws_conflicts import aws_conflict_model
from project.testing.aws_read_lag import aws_read_lag_model
from social.models import Comment, CounterShard, Like, TimelineDay


class Clock:
    def __init__(self) -> None:
        self.at = 1000.0

    def __call__(self) -> float:
        return self.at


@pytest.fixture
def lag():
    """The model with every write lagging exactly 1 s of `lag.clock`; yields (stats, clock)."""
    clock = Clock()
    with aws_read_lag_model(min_lag=1.0, max_lag=1.0, now=clock) as stats:
        yield stats, clock


def comment(comment_id: str, *, day_key: str = "20260101#0", at: str = "2026-01-01T00:00:01", **fields) -> Comment:
    return Comment(
        comment_id,
        author_id="1",
        body=fields.pop("body", "hello"),
        created_at=at,
        sort_key=f"{at}#{comment_id}",
        timeline_key=day_key,
        **fields,
    )


def timeline(day_key: str = "20260101#0", **query) -> list[str]:
    return [c.comment_id for c in Comment.timeline_index.query(day_key, scan_index_forward=False, **query)]


def test_a_new_item_reaches_eventual_reads_after_its_lag_and_consistent_reads_at_once(lag):
    stats, clock = lag
    comment("c1").save()
    assert Comment.count("c1", consistent_read=True) == 1
    assert list(Comment.batch_get(["c1"])) == []
    assert timeline() == []
    assert Comment.get("c1", consistent_read=True).body == "hello"
    clock.at += 1.01
    assert timeline() == ["c1"]
    assert Comment.get("c1").body == "hello"
    assert stats.hidden_items == 2 and stats.stale_reads == 2 and stats.writes == 1


def test_an_update_serves_the_old_image_and_a_removed_index_key_keeps_the_item_listed(lag):
    stats, clock = lag
    comment("c1").save()
    clock.at += 2
    Comment("c1").update(actions=[Comment.body.set("edited"), Comment.timeline_key.remove()])
    assert Comment.get("c1").body == "hello"
    assert Comment.get("c1", consistent_read=True).body == "edited"
    assert timeline() == ["c1"]  # hidden from the timeline: the index has not caught up
    clock.at += 1.01
    assert timeline() == []
    assert Comment.get("c1").body == "edited"
    assert stats.stale_items == 1 and stats.resurrected_items == 1


def test_a_deleted_item_is_served_until_its_lag_passes(lag):
    _, clock = lag
    Like("c1", "u1").save()
    clock.at += 2
    Like("c1", "u1").delete()
    assert [like.user_id for like in Like.query("c1")] == ["u1"]
    assert [like.user_id for like in Like.query("c1", consistent_read=True)] == []
    assert [like.user_id for like in Like.batch_get([("c1", "u1")])] == ["u1"]
    clock.at += 1.01
    assert list(Like.query("c1")) == []


def test_a_later_write_never_shows_before_an_earlier_one():
    clock = Clock()
    with aws_read_lag_model(min_lag=0.0, max_lag=1.0, seed=3, now=clock):
        for count in range(1, 11):
            CounterShard("k", 0, count=count).save()
            clock.at += 0.05
        seen = []
        for _ in range(30):
            found = list(CounterShard.query("k"))
            seen.append(int(found[0].count) if found else 0)
            clock.at += 0.05
    assert seen == sorted(seen) and seen[-1] == 10


def test_a_query_keeps_its_key_range_order_and_limit_over_lagging_items(lag):
    _, clock = lag
    for n in (1, 3, 5):
        comment(f"c{n}", at=f"2026-01-01T00:00:0{n}").save()
    clock.at += 2
    comment("c4", at="2026-01-01T00:00:04").save()  # not in the index yet
    Comment("c3").delete()  # still in it
    Comment("c5").update(actions=[Comment.timeline_key.set("20260101#1")])  # still in its old partition
    assert timeline() == ["c5", "c3", "c1"]
    assert timeline(limit=2) == ["c5", "c3"]
    newer = Comment.sort_key > "2026-01-01T00:00:02"
    assert timeline(range_key_condition=newer) == ["c5", "c3"]
    assert timeline("20260101#1") == []
    page = Comment.timeline_index.query("20260101#0", scan_index_forward=False, limit=1)
    assert [c.comment_id for c in page] == ["c5"]
    rest = timeline(last_evaluated_key=page.last_evaluated_key)  # the page ends where the real one did
    assert rest == ["c3", "c1"]
    clock.at += 1.01
    assert timeline() == ["c4", "c1"] and timeline("20260101#1") == ["c5"]


def test_transactions_batch_writes_and_projections_lag_too(lag):
    stats, clock = lag
    client = dynamo.client()
    with Comment.batch_write() as batch:
        batch.save(comment("c1"))
    Comment("c1").update(actions=[Comment.body.set("once")])  # a transaction-free write of an item still lagging
    clock.at += 2
    table = Comment.Meta.table_name
    client.transact_write_items(
        TransactItems=[
            {
                "Update": {
                    "TableName": table,
                    "Key": {"comment_id": {"S": "c1"}},
                    "UpdateExpression": "SET body = :b",
                    "ExpressionAttributeValues": {":b": {"S": "twice"}},
                }
            }
        ]
    )
    answer = client.get_item(TableName=table, Key={"comment_id": {"S": "c1"}}, ProjectionExpression="body")
    assert answer["Item"] == {"body": {"S": "once"}}
    keys_only = client.query(
        TableName=table,
        IndexName="timeline",
        KeyConditionExpression="timeline_key = :k",
        ExpressionAttributeValues={":k": {"S": "20260101#0"}},
        ProjectionExpression="body",
    )
    assert keys_only["Items"] == [{"body": {"S": "once"}}]
    clock.at += 1.01
    assert Comment.get("c1").body == "twice"
    assert stats.writes == 3


def test_a_scan_adds_back_what_was_deleted_within_its_lag(lag):
    _, clock = lag
    TimelineDay("comments", "20260101", shards=1).save()
    clock.at += 2
    TimelineDay("comments", "20260101").delete()
    TimelineDay("comments", "20260102", shards=1).save()
    assert [day.day for day in TimelineDay.scan()] == ["20260101"]
    assert [day.day for day in TimelineDay.scan(consistent_read=True)] == ["20260102"]


def test_it_composes_with_the_conflict_model(lag):
    stats, clock = lag
    with aws_conflict_model() as conflicts:
        comment("c1").save()
        assert list(Comment.batch_get(["c1"])) == []
    clock.at += 1.01
    assert [c.comment_id for c in Comment.batch_get(["c1"])] == ["c1"]
    assert conflicts.writes == 1 and stats.writes == 1
