"""The signal a moderation decision sends, so the people it concerns are told.

social cannot write feeds (notifications sits above it); notifications connects its receiver
(notifications.moderation_notices) when it starts. Sent after the decision committed, with:
`comment_id`, `author_id`, `decision` ("hide", "unhide", "resolve", "delete"), `by` ("staff"
or "reports") and `episode`, the number of earlier unhides of the comment: with the
comment and decision it names the decision's notice, so a decision sent again (a retried staff
action) names the same notice and the feed writes it once.
"""

from __future__ import annotations

from django.dispatch import Signal

from social.models import ModerationAction

moderation_decided = Signal()


def unhides_before(*, comment_id: str, exclude_id: int | None = None) -> int:
    """How many unhides of the comment were made (done, or died unconfirmed) before `exclude_id`."""
    lines = ModerationAction.objects.filter(action="unhide", target_type="comment", target_id=comment_id[:64])
    if exclude_id is not None:
        lines = lines.exclude(pk=exclude_id)
    return lines.exclude(outcome="failed").count()
