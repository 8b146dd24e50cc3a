"""`create_tables` is idempotent and `create_tables --check` reports drift."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from project.dynamo import clients as dynamo
from project.dynamo.schema import create, drift
from project.dynamo.schema.check import tables_check
from project.dynamo.schema.create import tables_create
from project.dynamo.schema.describe import table_describe
from project.dynamo.schema.registry import registered_models
from social.models import Comment

pytestmark = pytest.mark.django_db


@pytest.fixture
def ttl_off_elsewhere(monkeypatch):
    """DynamoDB Local builds (and drops) an index of a live table on a background executor
    its TTL sweepers share: with seven or more tables' TTL on (this project has eight), the
    index stays CREATING for ever. The tests that add or drop one run with TTL off on every
    table, create_tables and its check told that no model has TTL, and TTL back on after.
    AWS has no such limit; the other tests check TTL as the models declare it."""
    client = dynamo.client()
    turned_off = []
    for model in registered_models():
        name = model.Meta.table_name
        ttl = client.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
        if ttl.get("TimeToLiveStatus") in ("ENABLED", "ENABLING"):
            spec = {"Enabled": False, "AttributeName": ttl["AttributeName"]}
            client.update_time_to_live(TableName=name, TimeToLiveSpecification=spec)
            turned_off.append((name, ttl["AttributeName"]))
    for module in (drift, create):
        monkeypatch.setattr(module, "ttl_attribute_name", lambda model: None)
    yield
    monkeypatch.undo()
    for name, attribute in turned_off:
        spec = {"Enabled": True, "AttributeName": attribute}
        client.update_time_to_live(TableName=name, TimeToLiveSpecification=spec)


def test_create_tables_twice_is_a_no_op(capsys):
    call_command("create_tables")
    first = capsys.readouterr().out
    assert "0 table(s) created" in first
    call_command("create_tables")
    assert "0 table(s) created" in capsys.readouterr().out
    call_command("create_tables", "--check")
    assert "match the models" in capsys.readouterr().out


def test_check_reports_a_table_created_without_its_indexes(ttl_off_elsewhere):
    client = dynamo.client()
    name = Comment.Meta.table_name
    client.delete_table(TableName=name)
    client.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "comment_id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "comment_id", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )
    try:
        reports = {report.logical_name: report for report in tables_check()}
        assert any("GSI timeline is missing" in line for line in reports["comments"].drift)
        assert reports["likes"].drift == []
        with pytest.raises(CommandError, match="differ from the models") as exit_info:
            call_command("create_tables", "--check")
        assert exit_info.value.returncode == 1
        # create_tables repairs what can be repaired: GSIs can be added to a live table.
        call_command("create_tables")
        assert {r.logical_name: r for r in tables_check()}["comments"].drift == []
    finally:
        client.delete_table(TableName=name)
        tables_create()


def test_check_says_a_missing_lsi_needs_the_table_recreated():
    from notifications.models import UnreadCount

    client = dynamo.client()
    name = UnreadCount.Meta.table_name
    client.delete_table(TableName=name)
    client.create_table(
        TableName=name,
        AttributeDefinitions=[
            {"AttributeName": "user_id", "AttributeType": "S"},
            {"AttributeName": "source", "AttributeType": "S"},
        ],
        KeySchema=[{"AttributeName": "user_id", "KeyType": "HASH"}, {"AttributeName": "source", "KeyType": "RANGE"}],
        BillingMode="PAY_PER_REQUEST",
    )
    try:
        drift = {r.logical_name: r for r in tables_check()}["unread_counts"].drift
        assert any("LSI by_count is missing" in line and "recreated" in line for line in drift)
    finally:
        client.delete_table(TableName=name)
        tables_create()


def test_missing_table_is_reported():
    from social.models import Like

    dynamo.client().delete_table(TableName=Like.Meta.table_name)
    try:
        report = {r.logical_name: r for r in tables_check()}["likes"]
        assert report.status == "MISSING"
    finally:
        tables_create()


def test_a_replaced_index_is_added_served_from_and_dropped_on_request(capsys, ttl_off_elsewhere):
    """The upgrade of a live table whose index changed shape (the ranking, once ALL, now
    INCLUDE under a new name): `create_tables` adds the new index with the existing items
    in it, `--check` names the old one, and `--drop-undeclared` removes it."""
    from social.models import CounterTotal
    from social.ranking import ranking_top

    client = dynamo.client()
    name = CounterTotal.Meta.table_name
    client.delete_table(TableName=name)
    client.create_table(  # the table as the earlier code created it
        TableName=name,
        AttributeDefinitions=[
            {"AttributeName": "counter_key", "AttributeType": "S"},
            {"AttributeName": "due_part", "AttributeType": "S"},
            {"AttributeName": "due_at", "AttributeType": "N"},
            {"AttributeName": "rank_part", "AttributeType": "S"},
            {"AttributeName": "rank_sort", "AttributeType": "S"},
        ],
        KeySchema=[{"AttributeName": "counter_key", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[
            {
                "IndexName": "due",
                "KeySchema": [
                    {"AttributeName": "due_part", "KeyType": "HASH"},
                    {"AttributeName": "due_at", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "KEYS_ONLY"},
            },
            {
                "IndexName": "ranking",
                "KeySchema": [
                    {"AttributeName": "rank_part", "KeyType": "HASH"},
                    {"AttributeName": "rank_sort", "KeyType": "RANGE"},
                ],
                "Projection": {"ProjectionType": "ALL"},
            },
        ],
        BillingMode="PAY_PER_REQUEST",
    )
    try:
        comment = _comment_with_total(7)
        call_command("create_tables")
        drift = {r.logical_name: r for r in tables_check()}["counter_totals"].drift
        assert drift == [line for line in drift if "GSI ranking exists but no model declares it" in line] != []
        [ranked] = ranking_top(kind="like", limit=5)  # read from the new index, backfilled
        assert (ranked.comment.id, ranked.total) == (comment, 7)
        assert ranked.aggregated_at is not None
        capsys.readouterr()
        call_command("create_tables", "--drop-undeclared")
        assert f"{name}.ranking: dropped" in capsys.readouterr().out
        assert {r.logical_name: r for r in tables_check()}["counter_totals"].drift == []
        assert [r.total for r in ranking_top(kind="like", limit=5)] == [7]
    finally:
        client.delete_table(TableName=name)
        tables_create()


def _comment_with_total(total: int) -> str:
    """A comment whose like total was aggregated (written as the aggregator writes it)."""
    from actions.comments import comment_create
    from social.models import CounterTotal
    from social.ranking import rank_part, rank_sort

    comment_id = comment_create(author_id="1", body="ranked").comment_id
    CounterTotal(
        f"like#{comment_id}",
        kind="like",
        object_id=comment_id,
        total=total,
        aggregated_at=1_700_000_000.0,
        rank_part=rank_part("like", comment_id),
        rank_sort=rank_sort(total, comment_id),
    ).save()
    return comment_id


def test_a_table_another_create_tables_made_meanwhile_is_not_an_error(monkeypatch):
    """Two `create_tables` at once (two deploys): both see the table missing, one creates it, the
    other's CreateTable is refused as ResourceInUseException; it waits for the table and goes on."""
    from social.models import Like

    name = Like.Meta.table_name
    dynamo.client().delete_table(TableName=name)
    describe = table_describe

    def the_other_creates_it_first(table_name):
        found = describe(table_name)
        if table_name == name and found is None:
            Like.create_table(wait=True, billing_mode="PAY_PER_REQUEST")
            monkeypatch.setattr(Like, "exists", classmethod(lambda cls: False))  # what this one saw
        return found

    monkeypatch.setattr(create, "table_describe", the_other_creates_it_first)
    try:
        reports = {report.logical_name: report for report in tables_create()}
        assert reports["likes"].created is False
        assert describe(name)["TableStatus"] == "ACTIVE"
    finally:
        monkeypatch.undo()
        tables_create()
