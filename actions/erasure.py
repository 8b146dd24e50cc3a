"""A deleted account's likes, undone as the person's own unlikes would be (project/accounts/erasure.py)."""

from __future__ import annotations

from actions.likes import like_erase
from notifications.models import LikeNotified
from project.accounts.erasure import erasure_step
from social.models import Like

PAGE = 25


@erasure_step(name="likes", order=10)
def likes_erase(*, user_id: str, cursor: str | None) -> str | None:
    """Up to PAGE of the person's likes, in comment id order after `cursor` (the `by_user`
    index): each undone by `like_erase` (count -1, the author's unread notification loses the
    liker, folded at once) and its `like_notified` marker deleted. Returns the last comment id,
    or None once the index lists no more.

    Again after a crash: the likes already undone fail their row's condition and change nothing;
    on AWS the index may still list one for a second, with the same result. The markers would
    expire anyway (TTL after LIKE_RENOTIFY_WINDOW_HOURS).
    """
    condition = Like.comment_id > cursor if cursor else None
    page = list(Like.by_user.query(user_id, range_key_condition=condition, limit=PAGE))
    for like in page:
        like_erase(comment_id=like.comment_id, user_id=user_id)
        LikeNotified(like.comment_id, user_id).delete()
    if len(page) < PAGE:
        return None
    last: str = page[-1].comment_id
    return last
