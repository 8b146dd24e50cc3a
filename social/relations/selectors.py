"""Reads of blocks and mutes (social.models.Relation): one person's list, one pair, many pairs.

Every read here is strongly consistent: each decides what someone is shown or told (a reply
refused, a like not notified, a comment left off the timeline), and the person who just
blocked or muted must see it at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth import get_user_model

from social.models import Relation

BLOCK = "block"
MUTE = "mute"


@dataclass(frozen=True)
class RelationState:
    """What `user_id` holds against `other_id`: a block, a mute, both or neither."""

    blocked: bool = False
    muted: bool = False

    @property
    def silenced(self) -> bool:
        """Kept out of the owner's inbox, e-mail and timeline: a block implies a mute for display."""
        return self.blocked or self.muted


def _state(item: Relation | None) -> RelationState:
    if item is None:
        return RelationState()
    return RelationState(blocked=item.blocked_at is not None, muted=item.muted_at is not None)


def relation_get(*, user_id: str, other_id: str) -> RelationState:
    """One pair: one strongly consistent Query of its one key, which costs what a GetItem costs
    (billed the same when there is none). A Query, not a GetItem, so that the processes' IAM
    policies grant one action less on this table (the web's policy is near IAM's size limit)."""
    found = list(Relation.query(user_id, Relation.other_id == other_id, consistent_read=True, limit=1))
    return _state(found[0] if found else None)


def blocked_by(*, owner_id: str, other_id: str) -> bool:
    """Whether `owner_id` blocked `other_id` (a reply to the owner's comment is then refused)."""
    return relation_get(user_id=owner_id, other_id=other_id).blocked


def relations_list(*, user_id: str) -> dict[str, RelationState]:
    """The person's blocks and mutes by other person: one consistent Query of their partition
    (at most RELATIONS_MAX small items: a few read units for the longest list)."""
    return {
        item.other_id: state
        for item in Relation.query(user_id, consistent_read=True)
        if (state := _state(item)).silenced
    }


def silenced_ids(*, user_id: str) -> frozenset[str]:
    """Everyone this person blocked or muted (one Query): what their timeline and inbox leave out."""
    return frozenset(relations_list(user_id=user_id))


def blocked_ids(*, user_id: str) -> frozenset[str]:
    """Everyone this person blocked (one Query): whose replies their view of a thread leaves out."""
    return frozenset(other_id for other_id, state in relations_list(user_id=user_id).items() if state.blocked)


@dataclass(frozen=True)
class RelatedPerson:
    """A person on someone's block or mute list, as the settings page and the API show them."""

    user_id: str
    username: str
    display_name: str
    blocked: bool
    muted: bool


def relations_people(*, user_id: str) -> list[RelatedPerson]:
    """The person's list with names (one Query, one relational query), by username."""
    states = relations_list(user_id=user_id)
    users = get_user_model().objects.filter(pk__in=[int(other) for other in states if other.isdigit()])
    people = [
        RelatedPerson(
            str(user.pk), user.username, user.shown_name, states[str(user.pk)].blocked, states[str(user.pk)].muted
        )
        for user in users
    ]
    return sorted(people, key=lambda person: person.username.lower())
