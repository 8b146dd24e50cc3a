"""What survives when a preferences or thread write is refused, answered ambiguously, raced, or
run twice; and that a deleted account's choices are forgotten."""

from __future__ import annotations

import threading
from unittest import mock

import pytest
from botocore.exceptions import ClientError

from notifications.models import Preferences, ThreadSubscription
from notifications.preferences.selectors import preferences_get, thread_state, thread_states
from notifications.preferences.services import (
    preferences_forget,
    preferences_update,
    thread_mute,
    thread_watch,
    thread_watch_if_unset,
)
from project.dynamo import wire
from tests.notifications.helpers import post, uid

pytestmark = pytest.mark.django_db(transaction=True)

REAL_CALL = wire.make_api_call


def _on_preferences_update(fault):
    """Patch botocore so UpdateItem on the preferences table goes through `fault(real_call)`."""

    def call(self, operation_name, api_params):
        def real():
            return REAL_CALL(self, operation_name, api_params)

        if operation_name == "UpdateItem" and api_params["TableName"] == Preferences.Meta.table_name:
            return fault(real)
        return real()

    return mock.patch.object(wire, "make_api_call", call)


def test_a_patch_refused_by_dynamodb_is_a_429_and_changes_nothing(api, make_user):
    user = make_user("ann")

    def throttled(real):
        error = {"Error": {"Code": "ProvisionedThroughputExceededException", "Message": "slow"}}
        raise ClientError(error, "UpdateItem")

    with _on_preferences_update(throttled):
        answer = api.as_user(user).patch("/api/me/preferences/", {"digest": "daily"}, format="json")

    assert answer.status_code == 429
    assert preferences_get(user_id=uid(user), consistent=True).digest == "off"
    assert Preferences.count() == 0


def test_a_patch_whose_answer_was_lost_is_sent_again_to_the_same_state(api, make_user):
    """The UpdateItem committed, then the connection dropped: the client sees an error and retries;
    the retry SETs the same values, so the state is what one PATCH would have made."""
    user = make_user("ann")
    body = {"kinds": {"mention": {"email": True}}, "digest": "weekly"}

    def lost(real):
        real()
        raise ClientError({"Error": {"Code": "InternalServerError", "Message": "lost"}}, "UpdateItem")

    client = api.as_user(user)
    with _on_preferences_update(lost):
        assert client.patch("/api/me/preferences/", body, format="json").status_code >= 500
    again = client.patch("/api/me/preferences/", body, format="json")

    assert again.status_code == 200
    stored = preferences_get(user_id=uid(user), consistent=True)
    assert stored.wants("mention", "email") and stored.digest == "weekly"
    assert again.json() == stored.as_json()


def _race(*calls) -> None:
    barrier = threading.Barrier(len(calls))

    def run(call):
        barrier.wait()
        call()

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def test_a_mute_and_a_watch_at_once_leave_one_state():
    for attempt in range(10):
        thread_id = f"t{attempt}"
        _race(
            lambda thread_id=thread_id: thread_mute(user_id="1", thread_id=thread_id),
            lambda thread_id=thread_id: thread_watch(user_id="1", thread_id=thread_id),
        )
        assert ThreadSubscription.count(thread_id) == 1
        assert thread_state(thread_id=thread_id, user_id="1") in {"mute", "watch"}


def test_a_reply_racing_a_mute_never_undoes_the_mute():
    """Whichever lands first, the mute stands: the reply's watch is a put on condition of no item."""
    for attempt in range(10):
        thread_id = f"t{attempt}"
        _race(
            lambda thread_id=thread_id: thread_watch_if_unset(user_id="1", thread_id=thread_id),
            lambda thread_id=thread_id: thread_mute(user_id="1", thread_id=thread_id),
        )
        assert thread_states(thread_id=thread_id) == {"1": "mute"}


def test_a_deleted_account_s_choices_are_forgotten(make_user):
    user, author = make_user("ann"), make_user("author")
    threads = [post(author, f"Thread {n}") for n in range(30)]  # more than one BatchWriteItem
    preferences_update(user_id=uid(user), patch={"digest": "daily"})
    for thread_id in threads:
        thread_mute(user_id=uid(user), thread_id=thread_id)
    thread_watch(user_id="someone-else", thread_id=threads[0])

    user.delete()  # the signal forgets once the deletion has committed

    assert Preferences.count() == 0
    assert [thread_states(thread_id=thread_id) for thread_id in threads[1:]] == [{}] * 29
    assert thread_states(thread_id=threads[0]) == {"someone-else": "watch"}
    preferences_forget(user_id=uid(user))  # twice: nothing left, no error
