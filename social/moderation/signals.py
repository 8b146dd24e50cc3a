"""The signals a moderation decision sends, so the people it concerns are told, crash or not.

social cannot write feeds (notifications sits above it); notifications connects its receivers
(notifications.moderation_notices) when it starts. Both carry `comment_id`, `author_id`,
`decision` ("hide", "unhide", "resolve", "delete"), `by` ("staff" or "reports") and `episode`,
the number of earlier unhides of the comment: with the comment and decision it names the
decision's notice, so a decision sent again (a retried staff action) names the same notice and
the feed writes it once.

- `moderation_deciding`, with `transaction` (a LabelledTransactWrite): the receiver adds the
  promise to tell (an outbox item) to it. A hide by reports sends it inside the report's own
  transaction, so the hide and the promise commit together; a staff decision sends it in a
  transaction of its own just before the decision's writes (the promise's run checks that the
  decision is in force, so a decision that died before its write tells nobody).
- `moderation_decided`, after the decision committed: the receiver keeps the promise at once
  (if the process dies first, `process_feed_retries` keeps it once it is due).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.dispatch import Signal

from project.dynamo.transactions import transact
from social.models import ModerationAction

if TYPE_CHECKING:
    from project.dynamo.transactions import LabelledTransactWrite

moderation_deciding = Signal()
moderation_decided = Signal()


def unhides_before(*, comment_id: str, exclude_id: int | None = None) -> int:
    """How many unhides of the comment were made (done, or died unconfirmed) before `exclude_id`."""
    lines = ModerationAction.objects.filter(action="unhide", target_type="comment", target_id=comment_id[:64])
    if exclude_id is not None:
        lines = lines.exclude(pk=exclude_id)
    return lines.exclude(outcome="failed").count()


def decision_promise(**decision: Any) -> None:
    """Record the promise to tell of a staff decision about to be made, in a transaction of its
    own (one put per receiver; none without receivers). Twice: the same item (its key names the
    decision). Raises when it cannot be recorded: the decision is then not made either."""
    if not moderation_deciding.has_listeners():
        return

    def build(transaction: LabelledTransactWrite) -> None:
        moderation_deciding.send(sender=ModerationAction, transaction=transaction, **decision)

    outcome = transact(build, what="moderation promise")
    if not outcome.ok:
        raise RuntimeError(f"moderation promise not recorded: {outcome.failed_labels}")
