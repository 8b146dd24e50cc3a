"""Puts and deletes on several tables in one BatchWriteItem (project/dynamo/batch_write.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from notifications.models import LikeEvent
from project.dynamo import batch_write, wire
from project.dynamo.batch_write import UnprocessedItemsError, batch_write_many
from project.testing.harness import dynamodb_calls
from social.models import LiveChange


def event(n: int) -> LikeEvent:
    return LikeEvent("c1", f"{n:020d}#e", author_id="a", liker_id=f"p{n}", kind="like", created_at=1)


def change(n: int) -> LiveChange:
    return LiveChange("0", f"{n:013d}#s", ids={f"c:{n}"}, expires_at=datetime(2030, 1, 1, tzinfo=UTC))


def stored_events() -> list[str]:
    return [each.event_id for each in LikeEvent.query("c1", consistent_read=True)]


def stored_changes() -> list[str]:
    return [each.at for each in LiveChange.query("0", consistent_read=True)]


@pytest.fixture
def calls():
    """The BatchWriteItem requests sent, by the number of writes in each."""
    with dynamodb_calls() as made:
        yield lambda: [
            sum(len(writes) for writes in params["RequestItems"].values())
            for operation, params in made
            if operation == "BatchWriteItem"
        ]


def test_puts_and_deletes_of_two_tables_go_in_one_request(calls):
    for n in range(3):
        event(n).save()
    batch_write_many(puts=[change(1)], deletes=[event(0), event(1)])
    assert calls() == [3]
    assert stored_events() == [event(2).event_id] and stored_changes() == [change(1).at]


def test_more_than_a_request_holds_are_sent_in_pages_of_25(calls):
    batch_write_many(puts=[event(n) for n in range(30)] + [change(1)])
    assert calls() == [25, 6]
    assert len(stored_events()) == 30


def test_nothing_to_write_sends_nothing(calls):
    batch_write_many()
    assert calls() == []


def test_twice_is_the_same_as_once():
    batch_write_many(puts=[change(1), event(1)], deletes=[event(2)])
    batch_write_many(puts=[change(1), event(1)], deletes=[event(2)])
    assert stored_events() == [event(1).event_id] and stored_changes() == [change(1).at]


def test_writes_left_unprocessed_are_sent_again(monkeypatch):
    """DynamoDB Local never throttles: the first answer leaves the delete unprocessed (injected)."""
    real = wire.make_api_call
    answers = []
    monkeypatch.setattr(batch_write.time, "sleep", lambda seconds: None)

    def throttle_the_delete_once(client, operation_name, api_params):
        if operation_name == "BatchWriteItem" and not answers:
            items = dict(api_params["RequestItems"])
            left = {LikeEvent.Meta.table_name: items.pop(LikeEvent.Meta.table_name)}
            answers.append(real(client, operation_name, {**api_params, "RequestItems": items}))
            return {**answers[0], "UnprocessedItems": left}
        return real(client, operation_name, api_params)

    event(0).save()
    monkeypatch.setattr(wire, "make_api_call", throttle_the_delete_once)
    batch_write_many(puts=[change(1)], deletes=[event(0)])
    assert stored_events() == [] and stored_changes() == [change(1).at]


def test_writes_left_unprocessed_every_time_raise_and_say_how_many(monkeypatch):
    monkeypatch.setattr(batch_write.time, "sleep", lambda seconds: None)
    real = wire.make_api_call

    def always_throttled(client, operation_name, api_params):
        if operation_name == "BatchWriteItem":
            return {"UnprocessedItems": api_params["RequestItems"]}
        return real(client, operation_name, api_params)

    monkeypatch.setattr(wire, "make_api_call", always_throttled)
    with pytest.raises(UnprocessedItemsError, match="2 writes left unprocessed"):
        batch_write_many(puts=[change(1), event(1)])
