"""A deleted account's likes and reactions, undone as the person's own unlikes and undos would be
(project/identity/erasure.py)."""

from __future__ import annotations

from actions.likes import like_erase
from actions.reactions import reaction_erase
from notifications.models import LikeNotified
from project.identity.erasure import erasure_step
from social.models import Like, Reaction

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


REACTIONS_PAGE = 25


@erasure_step(name="reactions", order=15)
def reactions_erase(*, user_id: str, cursor: str | None) -> str | None:
    """Up to REACTIONS_PAGE of the person's reactions, in comment id order from `cursor` (the
    `by_user` index), each undone by `reaction_erase` (its count -1, the author's unread reaction notification loses
    the person once none of theirs is left there, folded at once). Returns the last comment
    id, or None once the index lists no more. From `cursor` itself, not past it: a page may end
    inside one comment's reactions (up to six), whose rest the next page takes; those already
    undone, listed again (on AWS the index may trail a delete by a second), fail their row's
    condition and change nothing, as after a crash.
    """
    condition = Reaction.comment_id >= cursor if cursor else None
    page = list(Reaction.by_user.query(user_id, range_key_condition=condition, limit=REACTIONS_PAGE))
    for row in page:
        reaction_erase(comment_id=row.comment_id, user_id=user_id, name=row.reactor_key.rpartition("#")[2])
    if len(page) < REACTIONS_PAGE:
        return None
    last: str = page[-1].comment_id
    return last
