"""Blocking and muting people: social's relation and the retraction from the owner's inbox
(notifications.silence), committed together.

A block or mute is one transaction of two actions: the relation item (social.relations) and
the `feed_retry` item that promises to retract what the person already put in the owner's
unread inbox. So a process that dies after the commit loses no retraction (the drainer applies
the item), and one that dies before it changed nothing. An unblock or unmute deletes (or trims)
the relation, then puts the same item, which takes the person out of the feed's `silenced` set.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.translation import gettext

from notifications.outbox import outbox_add, outbox_send
from notifications.silence import Silence
from project.dynamo.transactions import LabelledTransactWrite, transact
from project.errors import Conflict
from social.account.limits import account_limit_enforce
from social.relations.selectors import BLOCK, MUTE, RelationState, relation_get
from social.relations.services import relation_clear_add, relation_other_find, relation_room_check, relation_set_add

KINDS = (BLOCK, MUTE)


@dataclass(frozen=True)
class RelationChange:
    username: str
    other_id: str
    state: RelationState


def relation_change(*, owner_id: str, username: str, kind: str, on: bool) -> RelationChange:
    """Block or mute (`on`), or undo it, the person named `username`; returns the state now.

    Unknown person: NotFound; oneself: 400; over RELATIONS_MAX: 400; over the account's
    `preferences` limit: RateLimited; nothing written in each case.

    Twice: the same state (a second block keeps the first time), and the second item put
    applies as a no-op. Concurrently with the other kind: both land (separate attributes).
    Dies half way: before the commit nothing changed; after it, `process_feed_retries`
    applies the retraction (or the unblock's feed change) the request did not.
    """
    if kind not in KINDS:
        raise ValueError(kind)
    other_id = relation_other_find(owner_id=owner_id, username=username)
    account_limit_enforce(name="preferences", user_id=owner_id)
    silence = Silence(owner_id=owner_id, other_id=other_id)
    if on:
        relation_room_check(user_id=owner_id, other_id=other_id)
    current = relation_get(user_id=owner_id, other_id=other_id)

    def build(transaction: LabelledTransactWrite) -> None:
        if on:
            relation_set_add(transaction, user_id=owner_id, other_id=other_id, kind=kind)
        else:
            relation_clear_add(transaction, user_id=owner_id, other_id=other_id, kind=kind, current=current)
        outbox_add(transaction, job=silence)

    def reread(outcome: object) -> bool:  # the other kind changed meanwhile: undo from the new state
        nonlocal current
        current = relation_get(user_id=owner_id, other_id=other_id)
        return True

    outcome = transact(build, what=f"relation_{'' if on else 'un'}{kind}", on_failed=reread)
    if not outcome.ok:
        raise Conflict(gettext("Blocks and mutes of this person kept changing, retry shortly."))
    outbox_send(silence)  # never raises: the item stays for process_feed_retries
    state = relation_get(user_id=owner_id, other_id=other_id)
    return RelationChange(username=username, other_id=other_id, state=state)
