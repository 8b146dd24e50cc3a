"""`create_tables` is idempotent and `create_tables --check` reports drift."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from project import dynamo
from social.models import Comment

pytestmark = pytest.mark.django_db


def test_create_tables_twice_is_a_no_op(capsys):
    call_command("create_tables")
    first = capsys.readouterr().out
    assert "0 table(s) created" in first
    call_command("create_tables")
    assert "0 table(s) created" in capsys.readouterr().out
    call_command("create_tables", "--check")
    assert "match the models" in capsys.readouterr().out


def test_check_reports_a_table_created_without_its_indexes():
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
        reports = {report.logical_name: report for report in dynamo.tables_check()}
        assert any("GSI timeline is missing" in line for line in reports["comments"].drift)
        assert reports["likes"].drift == []
        with pytest.raises(CommandError, match="differ from the models") as exit_info:
            call_command("create_tables", "--check")
        assert exit_info.value.returncode == 1
        # create_tables repairs what can be repaired: GSIs can be added to a live table.
        call_command("create_tables")
        assert {r.logical_name: r for r in dynamo.tables_check()}["comments"].drift == []
    finally:
        client.delete_table(TableName=name)
        dynamo.tables_create()


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
        drift = {r.logical_name: r for r in dynamo.tables_check()}["unread_counts"].drift
        assert any("LSI by_count is missing" in line and "recreated" in line for line in drift)
    finally:
        client.delete_table(TableName=name)
        dynamo.tables_create()


def test_missing_table_is_reported():
    from social.models import Like

    dynamo.client().delete_table(TableName=Like.Meta.table_name)
    try:
        report = {r.logical_name: r for r in dynamo.tables_check()}["likes"]
        assert report.status == "MISSING"
    finally:
        dynamo.tables_create()
