"""The daily rollup and the monthly tables' lifecycle (activity_tables, rollup_activity)."""

import gzip
import json
import random
from collections import Counter, defaultdict
from datetime import date, datetime, timedelta
from unittest import mock
from zoneinfo import ZoneInfo

import pytest
from django.core.management import call_command
from django.db import connections

from project.testing.harness import in_threads
from social.activity import archive, month_tables, rollup, rotation
from social.activity import services as activity
from social.activity.models import ActivityDaily, ActivityDay

pytestmark = pytest.mark.django_db(transaction=True)

TOKYO = ZoneInfo("Asia/Tokyo")
DAY = date(2026, 11, 18)
START = datetime(2026, 11, 18, 0, 0, tzinfo=TOKYO).timestamp()
AFTER = START + 2 * 86400  # well after the day ended plus the grace


@pytest.fixture(autouse=True)
def activity_clean(settings, tmp_path):
    settings.TIME_ZONE = "Asia/Tokyo"
    settings.ACTIVITY_EXPORT_DIR = str(tmp_path / "exports")
    for month in month_tables.activity_table_months():
        month_tables.activity_table_drop(month=month)
    month_tables.activity_tables_forget()
    yield
    month_tables.activity_tables_forget()


def rows(day=DAY) -> dict[str, tuple[int, int]]:
    return {row.action: (row.count, row.users) for row in ActivityDaily.objects.filter(date=day)}


def test_rollup_equals_the_actions_made():
    made: Counter = Counter()
    users: dict[str, set] = defaultdict(set)
    generator = random.Random(11)
    for n in range(400):
        user_id, action = str(generator.randrange(60)), generator.choice(activity.ACTIONS)
        at = START + generator.uniform(0, 86399.999)
        assert activity.activity_record(user_id=user_id, action=action, object_id=f"o{n}", at=at)
        made[action] += 1
        users[action].add(user_id)
    # Neighbours that must not be counted: the last millisecond before and the first after.
    activity.activity_record(user_id="1", action="like", at=START - 0.001)
    activity.activity_record(user_id="1", action="like", at=START + 86400)

    count = rollup.activity_rollup_day(day=DAY, now=AFTER)
    assert rows() == {action: (made[action], len(users[action])) for action in made}
    day = ActivityDay.objects.get(date=DAY)
    assert day.items == 400 and day.final
    assert day.active_users == len(set().union(*users.values())) == count.active_users


def test_rerun_after_late_items_replaces_the_day():
    activity.activity_record(user_id="1", action="like", at=START + 10)
    rollup.activity_rollup_day(day=DAY, now=START + 86400 + 1)  # before the grace: not final
    assert rows() == {"like": (1, 1)}
    assert not ActivityDay.objects.get(date=DAY).final
    activity.activity_record(user_id="2", action="like", at=START + 86399.999)  # written late
    activity.activity_record(user_id="2", action="view", at=START + 20)
    rollup.activity_rollup_day(day=DAY, now=AFTER)
    assert rows() == {"like": (2, 2), "view": (1, 1)}
    assert ActivityDay.objects.get(date=DAY).final
    rollup.activity_rollup_day(day=DAY, now=AFTER + 1)
    assert rows() == {"like": (2, 2), "view": (1, 1)}
    assert ActivityDaily.objects.count() == 2


def test_two_rollups_of_one_day_at_once_give_the_same_rows():
    for user_id in ("1", "2", "3"):
        activity.activity_record(user_id=user_id, action="comment", at=START + 60)
    first = rollup.activity_day_count(day=DAY, now=AFTER)
    second = rollup.activity_day_count(day=DAY, now=AFTER + 1)
    assert rollup.activity_day_store(second, final=True)
    assert not rollup.activity_day_store(first, final=True)  # older read: the newer rows stay
    assert rows() == {"comment": (3, 3)}
    # Interleaved the other way round, the same rows.
    ActivityDaily.objects.all().delete()
    ActivityDay.objects.all().delete()
    assert rollup.activity_day_store(first, final=True)
    assert rollup.activity_day_store(second, final=True)
    assert rows() == {"comment": (3, 3)}


def test_rollups_stored_from_threads_at_once_keep_the_newest_count():
    """Each thread stores on its own database connection. The first stores of a day race to
    create its row: the losers' INSERT waits for the winner's commit, fails on the unique
    date inside get_or_create, which then locks the winner's row. Whatever the order, the
    newest count is what stays."""
    counts = [
        rollup.DayCount(
            day=DAY,
            started_at=AFTER + n,
            counts=Counter({"like": n + 1}),
            users=Counter({"like": 1}),
            active_users=1,
            items=n + 1,
        )
        for n in range(6)
    ]

    def store(n):
        try:
            return rollup.activity_day_store(counts[n], final=True)
        finally:
            connections.close_all()

    stored = in_threads(store, len(counts))
    assert stored[-1] is True  # the newest is never refused
    assert rows() == {"like": (6, 1)}
    day = ActivityDay.objects.get(date=DAY)
    assert (day.items, day.rolled_up_at.timestamp(), day.final) == (6, AFTER + 5, True)


def test_days_due_for_the_loop(settings):
    settings.ACTIVITY_ROLLUP_GRACE_SECONDS = 900
    settings.ACTIVITY_ROLLUP_TODAY_SECONDS = 300
    now = START + 86400 + 600  # 00:10 on the 19th: the 18th is still within the grace
    assert rollup.activity_days_due(now=now) == [DAY - timedelta(days=1), DAY, DAY + timedelta(days=1)]
    for day in rollup.activity_days_due(now=now):
        rollup.activity_rollup_day(day=day, now=now)
    assert rollup.activity_days_due(now=now + 60) == []
    # Grace over: the 18th once more, final; today again because it is 5 minutes stale.
    assert rollup.activity_days_due(now=now + 301) == [DAY, DAY + timedelta(days=1)]
    for day in rollup.activity_days_due(now=now + 301):
        rollup.activity_rollup_day(day=day, now=now + 301)
    assert ActivityDay.objects.get(date=DAY).final
    assert rollup.activity_days_due(now=now + 400) == []
    assert rollup.activity_days_due(now=now + 602) == [DAY + timedelta(days=1)]


def test_rollup_command_for_a_date(capsys):
    activity.activity_record(user_id="4", action="view", at=START + 5)
    call_command("rollup_activity", "--date", "2026-11-18")
    assert rows() == {"view": (1, 1)}
    assert "1 actions by 1 active users" in capsys.readouterr().out


def test_rollup_of_a_day_without_a_table_is_empty():
    count = rollup.activity_rollup_day(day=date(2020, 1, 1), now=AFTER)
    assert count.items == 0 and rows(date(2020, 1, 1)) == {}


def test_tables_created_ahead_cooled_and_archived(settings):
    settings.ACTIVITY_RETENTION_MONTHS = 3
    now = START  # November 2026
    old = datetime(2026, 7, 31, 23, 59, 59, tzinfo=TOKYO).timestamp()  # past retention
    cold = datetime(2026, 9, 2, tzinfo=TOKYO).timestamp()  # older than the previous month
    for at in (old, old - 5, cold):
        activity.activity_record(user_id="8", action="like", at=at)

    report = rotation.activity_tables_maintain(now=now)
    assert report.created == ["202611", "202612"]
    assert [export.month for export in report.archived] == ["202607"]
    switched = {f"switched to {month_tables.INFREQUENT_ACCESS}", month_tables.NO_TABLE_CLASSES}  # AWS, DynamoDB Local
    assert list(report.cooled) == ["202609"] and report.cooled["202609"] in switched
    assert month_tables.activity_table_months() == ["202609", "202611", "202612"]
    export = report.archived[0]
    with gzip.open(export.path, "rt") as lines:
        exported = [json.loads(line) for line in lines]
    assert len(exported) == 2 and {line["action"] for line in exported} == {"like"}
    assert {line["day_key"][:8] for line in exported} == {"20260731"}

    again = rotation.activity_tables_maintain(now=now)  # idempotent
    assert again.created == [] and again.archived == []
    assert list(again.cooled) == ["202609"]
    assert again.cooled["202609"] in {"already infrequent access", month_tables.NO_TABLE_CLASSES}


def test_a_month_whose_export_does_not_verify_is_kept(settings):
    settings.ACTIVITY_RETENTION_MONTHS = 1
    activity.activity_record(user_id="8", action="like", at=datetime(2026, 8, 3, tzinfo=TOKYO).timestamp())
    with mock.patch.object(archive, "month_item_count", return_value=2):  # a write landed meanwhile
        report = rotation.activity_tables_maintain(now=START)
    assert report.kept == ["202608"] and "202608" in month_tables.activity_table_months()


def test_activity_tables_command(capsys):
    with mock.patch.object(activity, "clock", return_value=START):
        call_command("activity_tables")
    assert "202611" in capsys.readouterr().out
    assert {"202611", "202612"} <= set(month_tables.activity_table_months())


def test_rollup_loop_keeps_tables_ready_and_rolls_up_due_days():
    from social.management.commands.rollup_activity import Command

    activity.activity_record(user_id="4", action="like", at=START + 5)

    class OneRound:
        """A stop event that lets the loop run one round (no waiting)."""

        rounds = 0

        def is_set(self):
            return self.rounds > 0

        def wait(self, seconds):
            self.rounds += 1

    with mock.patch.object(activity, "clock", return_value=START + 86400 + 1200):  # 00:20 on the 19th
        Command().run_loop(stop=OneRound(), poll_seconds=30)
    assert rows() == {"like": (1, 1)}
    assert ActivityDay.objects.get(date=DAY).final
    assert {"202611", "202612"} <= set(month_tables.activity_table_months())


class FakeExports:
    """DynamoDB's export to S3, which DynamoDB Local lacks; everything else goes to the real client."""

    def __init__(self, real):
        self.real = real
        self.exports: list[dict] = []
        self.started: list[dict] = []

    def __getattr__(self, name):
        return getattr(self.real, name)

    def list_exports(self, TableArn):
        summaries = [{"ExportArn": e["ExportArn"], "ExportStatus": e["ExportStatus"]} for e in self.exports]
        return {"ExportSummaries": summaries}

    def describe_export(self, ExportArn):
        return {"ExportDescription": next(e for e in self.exports if e["ExportArn"] == ExportArn)}

    def update_continuous_backups(self, **kwargs):
        return {}

    def export_table_to_point_in_time(self, **kwargs):
        self.started.append(kwargs)
        self.exports.append({"ExportArn": f"arn:export/{len(self.exports)}", "ExportStatus": "IN_PROGRESS"})
        return {}


def test_months_past_retention_go_to_s3_and_are_dropped_only_when_the_export_is_complete(settings):
    settings.ACTIVITY_RETENTION_MONTHS = 3
    settings.ACTIVITY_EXPORT_S3_BUCKET = "archive-bucket"
    for n in range(3):
        activity.activity_record(user_id=str(n), action="like", at=datetime(2026, 7, 5, tzinfo=TOKYO).timestamp())
    fake = FakeExports(archive.client())
    with mock.patch.object(archive, "client", lambda: fake):
        assert rotation.activity_tables_maintain(now=START).s3 == {"202607": "export started"}
        assert fake.started[0]["S3Bucket"] == "archive-bucket"
        assert rotation.activity_tables_maintain(now=START).s3 == {"202607": "exporting"}
        assert len(fake.started) == 1  # not started twice
        fake.exports[0] |= {"ExportStatus": "COMPLETED", "ItemCount": 2}  # short of the table's 3 items
        assert rotation.activity_tables_maintain(now=START).s3["202607"].startswith("kept")
        assert "202607" in month_tables.activity_table_months()
        fake.exports[0]["ItemCount"] = 3
        assert rotation.activity_tables_maintain(now=START).s3 == {"202607": "dropped"}
    assert "202607" not in month_tables.activity_table_months()


def test_a_rollup_stopped_half_way_stores_nothing_and_the_day_stays_due(monkeypatch):
    for n in range(5):
        activity.activity_record(user_id="7", action="like", object_id=f"o{n}", at=START + n)
    monkeypatch.setattr(rollup, "PROGRESS_EVERY", 1)  # asked after every item
    asked = []

    def should_stop():
        asked.append(True)
        return True  # a signal came after the first item

    assert rollup.activity_rollup_day(day=DAY, now=AFTER, should_stop=should_stop) is None
    assert asked and rows() == {} and not ActivityDay.objects.filter(date=DAY).exists()
    assert DAY in rollup.activity_days_due(now=AFTER)
    assert rollup.activity_rollup_day(day=DAY, now=AFTER).items == 5  # the next run counts it all
    assert rows() == {"like": (5, 1)}
