"""Writes of preferences and thread states (reads: notifications/preferences/selectors.py).

Every write here is a single-item write, atomic by itself; none needs a transaction.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.utils.translation import gettext
from pynamodb.exceptions import DeleteError, PutError, UpdateError

from notifications.models import Preferences, ThreadSubscription
from notifications.preferences.digest_slots import digest_key, digest_slot
from notifications.preferences.selectors import (
    ALWAYS_ON,
    CHANNELS,
    DIGESTS,
    KINDS,
    NotifyPreferences,
    preferences_attribute,
    preferences_from_item,
    preferences_get,
    thread_state,
)
from project.clock import clock
from project.errors import ApplicationError, condition_failed
from social.account.limits import account_limit_enforce

LIMIT = "preferences"  # settings.RATE_LIMITS: saves, mutes and watches per account (not a reply's watch)


def preferences_patch_parse(patch: Any) -> dict[str, Any]:
    """The `preferences` attributes a PATCH body sets (`{"like_email": True, "digest": "daily"}`).

    The body is any part of `GET /api/me/preferences/`'s answer; anything else is an
    ApplicationError naming the field (`kinds.like.email`), so nothing is written.
    """
    if not isinstance(patch, dict):
        raise ApplicationError(gettext("Send a JSON object: any part of the preferences."), field="non_field_errors")
    changes: dict[str, Any] = {}
    for key, value in patch.items():
        if key == "kinds":
            changes |= _kinds_parse(value)
        elif key == "digest":
            if not isinstance(value, str) or value not in DIGESTS:
                raise ApplicationError(
                    gettext("Choose one of: %(join_digests)s.") % {"join_digests": ", ".join(DIGESTS)}, field="digest"
                )
            changes["digest"] = value
        else:
            raise ApplicationError(gettext("Unknown field: the preferences have `kinds` and `digest`."), field=str(key))
    return changes


def _kinds_parse(kinds: Any) -> dict[str, bool]:
    if not isinstance(kinds, dict):
        raise ApplicationError(gettext("Send an object of kinds."), field="kinds")
    changes: dict[str, bool] = {}
    for kind, channels in kinds.items():
        if kind not in KINDS:
            raise ApplicationError(
                gettext("Unknown kind: choose from %(join_kinds)s.") % {"join_kinds": ", ".join(KINDS)},
                field=f"kinds.{kind}",
            )
        if not isinstance(channels, dict):
            raise ApplicationError(gettext("Send an object of channels."), field=f"kinds.{kind}")
        for channel, on in channels.items():
            name = f"kinds.{kind}.{channel}"
            if channel not in CHANNELS:
                raise ApplicationError(
                    gettext("Unknown channel: choose from %(join_channels)s.") % {"join_channels": ", ".join(CHANNELS)},
                    field=name,
                )
            if not isinstance(on, bool):
                raise ApplicationError(gettext("Must be true or false."), field=name)
            if (kind, channel) in ALWAYS_ON and not on:
                raise ApplicationError(gettext("Staff messages always reach the inbox."), field=name)
            changes[preferences_attribute(kind, channel)] = on
    return changes


def preferences_update(*, user_id: str, patch: Any, limited: bool = True) -> NotifyPreferences:
    """Apply any part of the preferences (`patch`, as the API takes it) and answer the whole new state.

    One UpdateItem that SETs only the flags sent (and, with the digest, the sparse
    `digest_key` that lists the person in the `digest` index under the slot of their local digest
    hour, read from their user row (one SQL query), or REMOVEs it for `off`), with
    ReturnValues ALL_NEW: 1 write unit, no read first. It needs no condition: each SET is an
    absolute value, not derived from a read, so there is nothing stale to guard.
    Runs twice: the same values again. Two concurrent PATCHes of different fields: both
    land (neither rewrites the other's attribute; a read-modify-put would lose one); of
    the same field: the later one stands, as if sent one after the other. Dies half way:
    the UpdateItem applied as a whole or not at all. An empty patch writes nothing and
    answers the stored state (one strongly consistent GetItem). `limited=False` skips the
    account's LIMIT_PREFERENCES: only for a mail's one-click unsubscribe, which must never
    be refused (its caller writes only when the e-mail is still on).
    """
    changes = preferences_patch_parse(patch)
    if not changes:
        return preferences_get(user_id=user_id, consistent=True)
    if limited:
        account_limit_enforce(name=LIMIT, user_id=user_id)  # RateLimited (429): nothing written
    actions = []
    for name, value in changes.items():
        actions.append(getattr(Preferences, name).set(value))
    if "digest" in changes:
        digest = changes["digest"]
        key = None if digest == "off" else digest_key(digest=digest, slot=reader_slot(user_id=user_id))
        actions.append(Preferences.digest_key.set(key) if key else Preferences.digest_key.remove())
    actions.append(Preferences.updated_at.set(clock.now_ms()))
    item = Preferences(user_id)
    item.update(actions=actions)
    return preferences_from_item(item)


def reader_slot(*, user_id: str) -> str:
    """The digest slot of the person's zone and digest hour (their user row; the site's when none)."""
    row = get_user_model().objects.filter(pk=int(user_id)).first() if user_id.isdigit() else None
    return digest_slot(time_zone=getattr(row, "time_zone", "") or "", hour=getattr(row, "digest_hour", None))


def digest_rekey(*, user_id: str, digest: str, old_key: str | None, slot: str) -> bool:
    """List a reader of `digest` under `slot` (their zone or digest hour changed, or they were
    listed under an older key): one UpdateItem on condition they still read that digest under
    `old_key` (None: whatever key), so a digest turned off or changed meanwhile stays as it is.
    True when it moved them. Twice: the second finds the key moved and writes nothing; dies
    half way: the one write happened or not."""
    key = digest_key(digest=digest, slot=slot)
    if key == old_key:
        return False
    still = Preferences.digest == digest
    condition = still & (Preferences.digest_key == old_key) if old_key else still & Preferences.digest_key.exists()
    try:
        Preferences(user_id).update(actions=[Preferences.digest_key.set(key)], condition=condition)
    except UpdateError as error:
        if condition_failed(error):
            return False
        raise
    return True


def digest_slot_follow(*, user_id: str) -> bool:
    """After a person changed their time zone or digest hour: list them under their new slot
    (one consistent GetItem of their preferences, then `digest_rekey`; nothing when their digest
    is off). Twice: the second writes nothing."""
    preferences = preferences_get(user_id=user_id, consistent=True)
    if preferences.digest == "off":
        return False
    return digest_rekey(user_id=user_id, digest=preferences.digest, old_key=None, slot=reader_slot(user_id=user_id))


# --- threads --------------------------------------------------------------------
#
# One item per person and thread holds their one state, `watch` or `mute`: muting a
# watched thread replaces the watch and watching a muted one unmutes it, with no
# read first and no way for two concurrent clicks to leave both. Of two concurrent
# changes the later write stands (each is a single-item write).


def _thread_put(*, user_id: str, thread_id: str, state: str) -> str:
    account_limit_enforce(name=LIMIT, user_id=user_id)  # RateLimited (429): nothing written
    ThreadSubscription(thread_id, user_id, state=state, at=clock.now_ms()).save()
    return state


def _thread_delete_if(*, user_id: str, thread_id: str, state: str) -> str | None:
    """Delete the person's item on condition it holds `state`; answers the state after it."""
    account_limit_enforce(name=LIMIT, user_id=user_id)
    try:
        ThreadSubscription(thread_id, user_id).delete(condition=ThreadSubscription.state == state)
    except DeleteError as error:
        if not condition_failed(error):
            raise
        # No item, or the other state (unmute on a watched thread): nothing to undo.
        return thread_state(thread_id=thread_id, user_id=user_id)
    return None


def thread_mute(*, user_id: str, thread_id: str) -> str:
    """No more notifications from the thread: one PutItem (1 write unit, plus the `by_user` index's).

    Replaces a watch. Twice: the same item again. Dies half way: the put is whole or absent.
    """
    return _thread_put(user_id=user_id, thread_id=thread_id, state="mute")


def thread_unmute(*, user_id: str, thread_id: str) -> str | None:
    """Undo a mute: one DeleteItem on condition the item says `mute`, so an unmute racing a
    watch never removes the watch. Twice, or on a thread not muted: no change (answers the
    state, read once consistently)."""
    return _thread_delete_if(user_id=user_id, thread_id=thread_id, state="mute")


def thread_watch(*, user_id: str, thread_id: str) -> str:
    """Every reply in the thread notifies the person: one PutItem; watching a muted thread unmutes
    it. Twice: the same item again. Dies half way: the put is whole or absent."""
    return _thread_put(user_id=user_id, thread_id=thread_id, state="watch")


def thread_unwatch(*, user_id: str, thread_id: str) -> str | None:
    """Stop watching: one DeleteItem on condition the item says `watch` (a concurrent mute stays).
    Twice, or on a thread not watched: no change."""
    return _thread_delete_if(user_id=user_id, thread_id=thread_id, state="watch")


def thread_watch_if_unset(*, user_id: str, thread_id: str) -> None:
    """Replying watches the thread, unless the person muted or already watches it: one PutItem on
    condition there is no item (a failed condition is the answer "already set", not an error).

    Twice: the second finds the item and writes nothing. Racing a mute: whichever comes
    second wins only if it is the mute (the mute is an unconditional put; this put fails
    once the mute is there), so a reply never undoes a mute. Dies half way: whole or absent;
    the reply stands without the watch, which is a convenience, not a promise.
    """
    try:
        ThreadSubscription(thread_id, user_id, state="watch", at=clock.now_ms()).save(
            condition=ThreadSubscription.user_id.does_not_exist()
        )
    except PutError as error:
        if not condition_failed(error):
            raise


def preferences_forget(*, user_id: str) -> None:
    """Forget everything a deleted account chose: its preferences item (one DeleteItem) and its
    thread states (found through the `by_user` index, deleted with BatchWriteItem, 25 a request).

    Twice: nothing left to delete, no error. Dies half way: what is left is found and deleted
    by running it again; left alone, a deleted account's watch only queues feed entries
    nobody can read. The index may trail by a second: a thread muted in the very second
    before the deletion may stay (the same harmless leftover).
    """
    Preferences(user_id).delete()
    thread_ids = [
        entry.thread_id
        for entry in ThreadSubscription.by_user.query(user_id, attributes_to_get=["thread_id", "user_id"])
    ]
    with ThreadSubscription.batch_write() as batch:
        for thread_id in thread_ids:
            batch.delete(ThreadSubscription(thread_id, user_id))
