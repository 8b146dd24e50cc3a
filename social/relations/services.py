"""Writes of blocks and mutes: one single-item UpdateItem or DeleteItem each.

Blocking or muting is `relation_set_add` inside the caller's transaction (actions/relations.py
adds the promise to retract what the person already put in the owner's inbox, which lives in
notifications). A block and a mute are attributes of one item (social.models.Relation), so:

- twice: the same item (the time is kept from the first, `if_not_exists`);
- concurrently with the other kind: both land (each SETs or REMOVEs its own attribute);
- dies half way: the item is written whole or not at all.

Undoing (`relation_clear_add`) deletes the item when the other kind is not there (a condition),
else removes only its own attribute, so an unblock racing a mute never undoes the mute.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.utils.translation import gettext_lazy
from pynamodb.attributes import NumberAttribute

from project.clock import clock
from project.dynamo.transactions import LabelledTransactWrite
from project.errors import ApplicationError, NotFound
from social.models import Relation
from social.relations.selectors import BLOCK, MUTE, RelationState

# People one person may block and mute in all: their list is read whole by each timeline page,
# inbox page and like fold of theirs, and copied into their feed item (notifications.silence).
RELATIONS_MAX = 500
RELATIONS_FULL = f"You can block or mute at most {RELATIONS_MAX} people; unblock or unmute someone first."
NOT_YOURSELF = gettext_lazy("You cannot block or mute yourself.")
NO_SUCH_PERSON = gettext_lazy("No such person.")


def _attribute(kind: str) -> NumberAttribute:
    if kind == BLOCK:
        return Relation.blocked_at
    if kind == MUTE:
        return Relation.muted_at
    raise ValueError(kind)


def relation_other_find(*, owner_id: str, username: str) -> str:
    """The id of the person named (any letter case), to block or mute: NotFound, or a 400 for oneself."""
    user = get_user_model().objects.filter(username__iexact=username, is_active=True).first()
    if user is None:
        raise NotFound(NO_SUCH_PERSON)
    if str(user.pk) == owner_id:
        raise ApplicationError(NOT_YOURSELF, field="username")
    return str(user.pk)


def relation_room_check(*, user_id: str, other_id: str) -> None:
    """RELATIONS_MAX: a new person on a full list is a 400 (one consistent Query, counted; two
    people added at the same moment may pass it together, so the bound is "about")."""
    if Relation.count(user_id, consistent_read=True, range_key_condition=Relation.other_id == other_id):
        return  # already listed: a second kind or the same again takes no room
    if Relation.count(user_id, consistent_read=True) < RELATIONS_MAX:
        return
    # A full list may name deleted accounts: the eraser cannot find others' items naming the
    # person (no index by `other_id`), and no list shows them, so nobody could undo them. They
    # take no room: only people whose account exists count (one relational query, when full).
    listed = [item.other_id for item in Relation.query(user_id, consistent_read=True)]
    existing = get_user_model().objects.filter(pk__in=[int(other) for other in listed if other.isdigit()])
    if existing.count() >= RELATIONS_MAX:
        raise ApplicationError(RELATIONS_FULL, field="username")


def relation_set_add(transaction: LabelledTransactWrite, *, user_id: str, other_id: str, kind: str) -> None:
    """Add the block (or mute) to the caller's transaction: SET its time unless it is set."""
    attribute = _attribute(kind)
    transaction.update(
        Relation(user_id, other_id),
        actions=[attribute.set(attribute | clock.now())],
        label="relation",
    )


def relation_clear_add(
    transaction: LabelledTransactWrite, *, user_id: str, other_id: str, kind: str, current: RelationState
) -> None:
    """Add the undoing of a block (or mute) to the caller's transaction, from the state read:
    the item's delete on condition the other kind is absent, or, when it is there, the REMOVE of
    this kind's attribute on condition the other kind is still there. A concurrent change of the
    other kind fails the condition: the caller reads again and retries (no item is ever left
    holding neither, and an unblock racing a mute never undoes the mute)."""
    item = Relation(user_id, other_id)
    other = Relation.muted_at if kind == BLOCK else Relation.blocked_at
    if current.muted if kind == BLOCK else current.blocked:
        transaction.update(item, actions=[_attribute(kind).remove()], condition=other.exists(), label="relation")
    else:
        transaction.delete(item, condition=other.does_not_exist(), label="relation")
