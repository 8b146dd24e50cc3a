"""Preferences: the defaults, a PATCH of any part, concurrent PATCHes, the digest index."""

from __future__ import annotations

import threading

import pytest

from notifications.models import Preferences
from notifications.preferences.selectors import (
    NotifyPreferences,
    digest_readers,
    preferences_get,
    preferences_get_many,
)
from notifications.preferences.services import preferences_update
from project.errors import ApplicationError

# A digest choice reads the person's zone and hour from their user row (its slot).
pytestmark = pytest.mark.django_db

DEFAULTS = {
    "kinds": {
        "like": {"inbox": True, "email": False, "push": False},
        "reaction": {"inbox": True, "email": False, "push": False},
        "reply": {"inbox": True, "email": False, "push": False},
        "mention": {"inbox": True, "email": False, "push": False},
        "message": {"inbox": True, "email": False, "push": False},
    },
    "digest": "off",
}


def test_someone_who_never_chose_has_the_defaults_and_no_item():
    assert preferences_get(user_id="1").as_json() == DEFAULTS
    assert preferences_get_many(user_ids=["1", "2"]) == {"1": NotifyPreferences(), "2": NotifyPreferences()}
    assert Preferences.count() == 0


def test_a_patch_changes_only_what_it_names():
    preferences_update(user_id="1", patch={"kinds": {"like": {"inbox": False}}})
    after = preferences_update(user_id="1", patch={"kinds": {"reply": {"email": True}}, "digest": "weekly"})

    assert after == preferences_get(user_id="1", consistent=True)
    assert not after.wants("like", "inbox")
    assert after.wants("like", "email") is False
    assert after.wants("reply", "email")
    assert after.wants("mention", "inbox")
    assert after.digest == "weekly"
    many = preferences_get_many(user_ids=["1", "2"])
    assert many["1"] == after and many["2"] == NotifyPreferences()


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ([], "non_field_errors"),
        ({"colour": "red"}, "colour"),
        ({"kinds": []}, "kinds"),
        ({"kinds": {"poke": {"inbox": True}}}, "kinds.poke"),
        ({"kinds": {"like": True}}, "kinds.like"),
        ({"kinds": {"like": {"sms": True}}}, "kinds.like.sms"),
        ({"kinds": {"like": {"email": "yes"}}}, "kinds.like.email"),
        ({"kinds": {"like": {"email": 1}}}, "kinds.like.email"),
        ({"kinds": {"message": {"inbox": False}}}, "kinds.message.inbox"),
        ({"digest": "hourly"}, "digest"),
        ({"digest": None}, "digest"),
    ],
)
def test_a_bad_patch_names_its_field_and_writes_nothing(patch, field):
    with pytest.raises(ApplicationError) as raised:
        preferences_update(user_id="1", patch=patch)
    assert raised.value.field == field
    assert Preferences.count() == 0


def test_two_concurrent_patches_of_different_fields_both_land():
    """Each PATCH SETs only its own attributes: neither undoes the other, whichever order they land in."""
    barrier = threading.Barrier(2)

    def patch(body):
        barrier.wait()
        preferences_update(user_id="1", patch=body)

    threads = [
        threading.Thread(target=patch, args=({"kinds": {"like": {"email": True}}},)),
        threading.Thread(target=patch, args=({"kinds": {"reply": {"inbox": False}}},)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    stored = preferences_get(user_id="1", consistent=True)
    assert stored.wants("like", "email") and not stored.wants("reply", "inbox")


def test_a_patch_applied_twice_is_the_same_state():
    first = preferences_update(user_id="1", patch={"kinds": {"mention": {"email": True}}, "digest": "daily"})
    assert preferences_update(user_id="1", patch={"kinds": {"mention": {"email": True}}, "digest": "daily"}) == first


def test_digest_readers_are_listed_while_the_digest_is_on():
    for user_id in ("1", "2", "3", "4", "5"):
        preferences_update(user_id=user_id, patch={"digest": "daily"})
    preferences_update(user_id="5", patch={"digest": "weekly"})
    preferences_update(user_id="4", patch={"digest": "off"})

    assert sorted(user_id for user_id, _key in digest_readers(digest="daily")) == ["1", "2", "3"]
    assert [user_id for user_id, _key in digest_readers(digest="weekly")] == ["5"]
    assert Preferences.get("4").digest_key is None
