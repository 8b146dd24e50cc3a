"""Declarations of the activity log: one PynamoDB model class per month's table, and the
relational models the daily rollup writes.

The physical table of a month is `<DYNAMODB_TABLE_PREFIX>activity_YYYYMM`, so the table
name is chosen per month: `activity_model("202611")` returns a model class bound to that
month's table, built once per (endpoint, prefix, month) and cached. These classes are not
in `project.dynamo.schema.registry.registered_models()`: `create_tables` does not create them, the
`activity_tables` command (and the write path, as a last resort) does.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, cast

from django.db import models
from pynamodb.attributes import UnicodeAttribute
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model

from project.dynamo.clients import endpoint, table_meta

# The actions the log records.
COMMENT = "comment"
REPLY = "reply"
EDIT = "edit"
DELETE = "delete"
LIKE = "like"
UNLIKE = "unlike"
VIEW = "view"
READ = "read"
LOGIN = "login"
SIGNUP = "signup"
DELIVERY_RECEIVED = "delivery_received"
ACTIONS = (COMMENT, REPLY, EDIT, DELETE, LIKE, UNLIKE, VIEW, READ, LOGIN, SIGNUP, DELIVERY_RECEIVED)

ACTIVITY_TABLE_STEM = "activity_"

if TYPE_CHECKING:

    class ActivityItem(Model):
        """What every month's model class declares (`_declare`), for the type checker."""

        user_id = UnicodeAttribute(hash_key=True)
        at_key = UnicodeAttribute(range_key=True)
        day_key = UnicodeAttribute()
        action = UnicodeAttribute()
        object_id = UnicodeAttribute(null=True)
        by_day: GlobalSecondaryIndex[ActivityItem]


_lock = threading.Lock()
_models: dict[tuple[str | None, str, str], type[ActivityItem]] = {}


def activity_logical_name(month: str) -> str:
    """`activity_202611` for month `202611`."""
    return f"{ACTIVITY_TABLE_STEM}{month}"


def _declare(month: str) -> type[ActivityItem]:
    class ByDayIndex(GlobalSecondaryIndex):
        """One day's items, write-sharded by user (`20261122#7`), in time order
        (docs/explanation/activity-log.md "Activity log").

        All attributes are projected: the rollup needs the action, the export everything,
        and an item is ~150 bytes.
        """

        class Meta:
            index_name = "by_day"
            projection = AllProjection()

        day_key = UnicodeAttribute(hash_key=True)
        at_key = UnicodeAttribute(range_key=True)

    attributes = {
        "Meta": table_meta(activity_logical_name(month)),
        "__module__": __name__,
        "__doc__": f"One user action of month {month}.",
        "user_id": UnicodeAttribute(hash_key=True),
        # Epoch milliseconds, zero-padded, then a random suffix: `1795305599999#3f2a9c1e`.
        # Sorts by time as text and is unique even for two actions in one millisecond.
        "at_key": UnicodeAttribute(range_key=True),
        "day_key": UnicodeAttribute(),  # YYYYMMDD#n, n = 1..ACTIVITY_DAY_SHARDS, from the user id
        "action": UnicodeAttribute(),
        "object_id": UnicodeAttribute(null=True),
        "by_day": ByDayIndex(),
    }
    return cast("type[ActivityItem]", type(f"ActivityItem{month}", (Model,), attributes))


def activity_model(month: str) -> type[ActivityItem]:
    """The model class of month `month` (`YYYYMM`) under the current endpoint and prefix."""
    key = (endpoint().host, endpoint().prefix, month)
    model = _models.get(key)
    if model is None:
        with _lock:
            model = _models.get(key) or _declare(month)
            _models[key] = model
    return model


# --- the daily rollup (relational) ---------------------------------------------


class ActivityDay(models.Model):
    """One rolled-up day: daily active users, items counted, and when it was counted.

    `final` is set by a rollup that started after the day ended plus the grace period
    for late writes; the loop re-rolls a day until it is final.
    """

    date = models.DateField(unique=True)
    active_users = models.PositiveIntegerField(default=0)
    items = models.PositiveIntegerField(default=0)
    rolled_up_at = models.DateTimeField()
    final = models.BooleanField(default=False)

    class Meta:
        app_label = "social"
        ordering = ["-date"]

    def __str__(self) -> str:
        return f"{self.date}: {self.active_users} active users"


class ActivityDaily(models.Model):
    """Per day and action: how many times it happened and how many distinct users did it."""

    date = models.DateField()
    action = models.CharField(max_length=32)
    count = models.PositiveIntegerField()
    users = models.PositiveIntegerField()

    class Meta:
        app_label = "social"
        ordering = ["date", "action"]
        constraints = [models.UniqueConstraint(fields=["date", "action"], name="activity_daily_date_action")]

    def __str__(self) -> str:
        return f"{self.date} {self.action}: {self.count} by {self.users}"
