"""Reactions: a person's reaction row and a shard of the comment's reaction counter, one transaction.

Built as a like is (actions/likes.py): only items no other reactor of the comment writes at
that moment (the person's row for that reaction, one counter shard that grows when shards
collide), so reactions of one popular comment do not cancel each other on AWS; the counter's
due flag, which every reactor of the comment shares, is raised after the answer is sent.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from pynamodb.exceptions import PynamoDBException, UpdateError

from project.dynamo.transactions import transact, write_retrying
from project.errors import ApplicationError, NotFound, condition_failed
from project.serving.after_response import after_response
from project.serving.pools import READS, pool
from social.account.limits import account_limit_prepare
from social.counters import REACTIONS, ShardPick, counter_add, counter_due_flag_rely, counter_key, counter_shard_count
from social.models import Comment, CounterShard, Reaction
from social.reactions.names import NAMES, reaction_name_check, reaction_shard, reactor_key
from social.reactions.selectors import Reactions, reaction_state
from social.selectors import comment_find
from social.services import comment_get_visible

if TYPE_CHECKING:
    from project.dynamo.transactions import LabelledTransactWrite, TransactOutcome

logger = logging.getLogger(__name__)


def _reaction_transaction(
    transaction: LabelledTransactWrite, *, comment_id: str, user_id: str, name: str, adding: bool, shard: int
) -> None:
    """The one place the reaction (or its undo) transaction is built: the row put on condition it
    is absent (deleted on condition it is there) and +1 (-1) on one shard of the comment's
    reaction counter. No condition on the comment item, which every reactor would hold. Two
    actions under 1 KB: 4 write units, and 2 for the row's keys-only `by_user` index entry."""
    row = Reaction(comment_id, reactor_key(user_id=user_id, name=name), user_id=user_id)
    if adding:
        transaction.save(row, condition=Reaction.reactor_key.does_not_exist())
    else:
        transaction.delete(row, condition=Reaction.reactor_key.exists())
    key = counter_key(kind=REACTIONS, object_id=comment_id)
    counter_add(transaction, key=key, delta=1 if adding else -1, shard=shard, flag=False)


def _reaction_write(*, comment_id: str, user_id: str, name: str, adding: bool, erasing: bool = False) -> bool:
    """Run the transaction (a 400 on `name` for an unknown reaction, NotFound for a comment that is
    not visible); returns whether it wrote (False: the row already was as asked).

    Reads first: the comment (consistently) while the person's like budget, which reactions
    share, is counted (RateLimited over it: nothing written), and the counter's shard count (a
    GetItem of its `counter_totals` item, kept SHARD_OVERRIDE_CACHE_SECONDS by the process).
    """
    reaction_name_check(name)
    if erasing:  # a deleted account's reactions: any comment, hidden or deleted too; no budget
        if comment_find(comment_id=comment_id) is None:
            raise NotFound("No such comment.")
        comment = None
    else:
        count_against_budget = account_limit_prepare(name="like", user_id=user_id)
        budget = pool(READS).submit(count_against_budget) if count_against_budget else None
        try:
            comment = comment_get_visible(comment_id=comment_id)
        finally:
            if budget is not None:
                budget.result()
    key = counter_key(kind=REACTIONS, object_id=comment_id)
    shards_table = CounterShard.Meta.table_name
    with ShardPick(key, shards=counter_shard_count(key=key)) as pick:

        def grow_on_contention(outcome: TransactOutcome) -> None:
            if not outcome.codes or any(action.table == shards_table for action in outcome.cancelled_actions):
                pick.contended()

        outcome = transact(
            lambda transaction: _reaction_transaction(
                transaction,
                comment_id=comment_id,
                user_id=user_id,
                name=name,
                adding=adding,
                shard=reaction_shard(name=name, shard=pick.next()),
            ),
            what=f"reaction_{'add' if adding else 'remove'}",
            on_retry=grow_on_contention,
        )
    if outcome.ok and adding and comment is not None and not comment.has_reactions:
        _reacted_mark(comment)
    if outcome.ok:
        # The ranking's due flag: one item all reactors of the comment share, so never in the
        # transaction; after the answer, and not on every reaction of a hot comment.
        def flag() -> None:
            try:
                counter_due_flag_rely(key=key)
            except PynamoDBException as error:  # best effort: the next reaction raises it
                logger.warning("reaction counter %s: due flag not raised (%s)", key, error)

        if not after_response(flag):
            flag()
    return outcome.ok


def _reacted_mark(comment: Comment) -> None:
    """Record on the comment that it has reactions (`has_reactions`), after its first reaction
    committed and before the answer, so list pages read the reaction counts of such comments only.

    One conditional UpdateItem, once per comment ever reacted to (a later reaction reads the
    flag on the comment it read anyway and writes nothing): the item's size in KB in write
    units, twice (its `timeline` or `replies` index entry carries every attribute). Best effort:
    a concurrent first reaction finds it set; a write that fails (or a process that dies first)
    is made by the comment's next reaction; until then its counts show where every count is read
    exactly (`GET /api/comments/<id>/`, a reaction's answer) and to whoever just reacted there.
    """
    try:
        write_retrying(
            lambda: comment.update(
                actions=[Comment.has_reactions.set(True)],
                condition=Comment.comment_id.exists() & Comment.has_reactions.does_not_exist(),
            ),
            what="comment_reacted_mark",
        )
    except UpdateError as error:
        if not condition_failed(error):
            logger.warning("comment %s: has_reactions not recorded (%s)", comment.comment_id, error)
    except ApplicationError as error:  # Conflict: refusals persisted
        logger.warning("comment %s: has_reactions not recorded (%s)", comment.comment_id, error.message)


def reaction_add(*, comment_id: str, user_id: str, name: str) -> Reactions:
    """React to a comment with `name`: one 2-action TransactWriteItems, no read of the row first.

    The row (`<user id>#<name>` under the comment) is put on condition it is absent, so a
    second reaction of the same name, or a concurrent twin, cancels the transaction and changes
    nothing: idempotent, one of each reaction per person. A crash cannot leave a row without its
    count: both are in the transaction. Dies after the commit, before the due flag: the count is
    exact, the ranking shows it after the comment's next reaction. Answers the comment's
    reactions read exactly right after; this reaction is in them even if the same person's undo
    in another request landed in between (the answer describes the moment it committed).
    """
    _reaction_write(comment_id=comment_id, user_id=user_id, name=name, adding=True)
    state = reaction_state(comment_id=comment_id, user_id=user_id)
    counts = {
        n: max(1, state.counts.get(n, 0)) if n == name else state.counts[n]
        for n in NAMES
        if n == name or n in state.counts
    }
    return Reactions(counts, tuple(n for n in NAMES if n == name or n in state.mine))


def reaction_remove(*, comment_id: str, user_id: str, name: str) -> Reactions:
    """Take back one's reaction `name`: the row deleted on condition it exists and 1 subtracted,
    atomically. Twice (or concurrently) the condition fails the second and nothing changes, so a
    count never drops twice for one reaction. Answers the reactions read exactly right after."""
    _reaction_write(comment_id=comment_id, user_id=user_id, name=name, adding=False)
    state = reaction_state(comment_id=comment_id, user_id=user_id)
    return Reactions(state.counts, tuple(mine for mine in state.mine if mine != name))


def reaction_erase(*, comment_id: str, user_id: str, name: str) -> None:
    """A deleted account's reaction undone as its own undo would be, on any comment (hidden or
    deleted too), outside the budget. Twice: the row is gone and nothing changes again. A
    comment with no item at all: the row alone is deleted."""
    try:
        _reaction_write(comment_id=comment_id, user_id=user_id, name=name, adding=False, erasing=True)
    except NotFound:
        Reaction(comment_id, reactor_key(user_id=user_id, name=name)).delete()
