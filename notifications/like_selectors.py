"""The inbox's like (and reaction) notifications: their text, and the two sources the inbox
merges (notifications/selectors.py `INBOX_SOURCES`): unread ones, and read ones within retention.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, cast

from django.conf import settings
from django.urls import reverse
from django.utils.translation import gettext, ngettext

from notifications.inbox_items import Actor, Notification, Position, at_ns
from notifications.models import LikeRead, LikeUnread, read_key
from notifications.subjects import LIKE, REACTION, subject_comment, subject_kind
from project.clock import clock, parse_iso
from social.models import Comment
from social.reactions.names import REACTIONS
from social.reactions.selectors import reactions_of
from social.selectors import authors_by_id

if TYPE_CHECKING:
    from pynamodb.expressions.condition import Condition


def like_text(names: list[str], count: int, *, reaction: bool = False) -> str:
    """ "Alice liked your comment", "Alice and Bob ...", "Alice and 2 others ..." in the active
    language (the reader's: pages and mails activate it), plural forms from its catalogue; with
    `reaction`, "Alice and 3 others reacted to your comment".

    `count` is every unread like (`num_likes`), `names` the first likers still listed:
    the list keeps at most LIKE_NOTIFICATION_LIKERS_MAX, and when every listed liker
    undid their like while overflow likes remain counted, no name is left. Names are
    never translated.
    """
    if count <= 0:
        return gettext("Nobody reacted to your comment yet") if reaction else gettext("Nobody liked your comment yet")
    if not names:
        if count == 1:
            return gettext("Someone reacted to your comment") if reaction else gettext("Someone liked your comment")
        if reaction:
            text = ngettext(
                "%(count)d person reacted to your comment", "%(count)d people reacted to your comment", count
            )
        else:
            text = ngettext("%(count)d person liked your comment", "%(count)d people liked your comment", count)
        return text % {"count": count}
    if count == 1:
        text = gettext("%(name)s reacted to your comment") if reaction else gettext("%(name)s liked your comment")
        return text % {"name": names[0]}
    if count == 2 and len(names) >= 2:
        if reaction:
            text = gettext("%(first)s and %(second)s reacted to your comment")
        else:
            text = gettext("%(first)s and %(second)s liked your comment")
        return text % {"first": names[0], "second": names[1]}
    others = count - 1
    if reaction:
        text = ngettext(
            "%(name)s and %(count)d other reacted to your comment",
            "%(name)s and %(count)d others reacted to your comment",
            others,
        )
    else:
        text = ngettext(
            "%(name)s and %(count)d other liked your comment",
            "%(name)s and %(count)d others liked your comment",
            others,
        )
    return text % {"name": names[0], "count": others}


def _reaction_emoji(items: list[LikeUnread | LikeRead]) -> dict[str, str]:
    """The emoji of each reacted-to comment's reactions counted now, in the buttons' order
    (`❤️ 🎉`): one strongly consistent Query of its reaction counter per comment (a reaction
    folded a moment ago is in it), concurrently, only for reaction notifications."""
    subjects = {item.comment_id for item in items}
    comment_ids = sorted(subject_comment(subject) for subject in subjects if subject_kind(subject) == REACTION)
    if not comment_ids:
        return {}
    counted = reactions_of([Comment(c, has_reactions=True) for c in comment_ids], viewer_id=None)
    return {c: " ".join(REACTIONS[name] for name in counted[c].counts) for c in comment_ids}


def like_count(item: LikeUnread | LikeRead) -> int:
    """Every like of the notification: `num_likes`, which goes on counting past the listed likers.

    (`liker_ids` holds only the first LIKE_NOTIFICATION_LIKERS_MAX; the max also covers
    history read before `num_likes` was copied faithfully.)
    """
    return max(int(item.num_likes or 0), len(item.liker_ids or []))


def like_notifications(items: list[LikeUnread | LikeRead], *, unread: bool) -> list[Notification]:
    """Notifications for like items; the text names at most the first two likers."""
    named = {liker for item in items for liker in list(item.liker_ids or [])[:2]}
    authors = authors_by_id(sorted(named))
    emoji = _reaction_emoji(items)
    results = []
    for item in items:
        liker_ids = list(item.liker_ids or [])
        count = like_count(item)
        actors = tuple(Actor(liker, authors[liker].display_name) for liker in liker_ids[:2])
        updated_at = parse_iso(item.updated_at)
        kind, comment_id = subject_kind(item.comment_id), subject_comment(item.comment_id)
        names = [actor.display_name for actor in actors]
        text = like_text(names, count, reaction=kind != LIKE)
        if kind == REACTION and emoji.get(comment_id):
            text = f"{text} {emoji[comment_id]}"
        if unread:
            notification_id = f"like:{item.comment_id}"
            position = (1, at_ns(updated_at), notification_id)
            read_at = expires_at = None
        else:
            read = cast(LikeRead, item)  # `unread` is False: the items are LikeRead ones
            notification_id = f"like:{read.read_key}"
            position = (0, int(read.read_key.split("#", 1)[0]), notification_id)
            read_at = parse_iso(read.read_at)
            expires_at = read.expires_at
        results.append(
            Notification(
                id=notification_id,
                kind=kind,
                text=text,
                unread=unread,
                updated_at=updated_at,
                position=position,
                url=reverse("comment", args=[comment_id]),
                comment_id=comment_id,
                actors=actors,
                actor_count=count,
                listed_count=len(liker_ids),
                read_at=read_at,
                expires_at=expires_at,
            )
        )
    return results


def like_unread_source(*, user_id: str, before: Position | None, limit: int) -> list[Notification]:
    """Unread like notifications, newest update first.

    The LSI yields the comments with `num_likes > 0` only; they are sorted here by
    update time (DynamoDB can't key on both). A user has one unread item
    per liked comment at most, and reading them empties the set.
    """
    if before is not None and before[0] == 0:
        return []  # the cursor is already past every unread item
    items = list(LikeUnread.by_num_likes.query(user_id, LikeUnread.num_likes > 0, consistent_read=True))
    notifications = sorted(like_notifications(items, unread=True), key=lambda n: n.position, reverse=True)
    if before is not None:
        notifications = [n for n in notifications if n.position < before]
    return notifications[:limit]


def _retention_start_key() -> str:
    oldest = clock.now_ns() - int(timedelta(days=settings.NOTIFICATION_READ_RETENTION_DAYS).total_seconds() * 1e9)
    return f"{oldest:020d}"


def like_read_source(*, user_id: str, before: Position | None, limit: int) -> list[Notification]:
    """Read like notifications still within retention, newest read first.

    Expired items are filtered whether or not TTL has deleted them yet (AWS takes
    up to two days): the key range stops at the retention window and `expires_at`
    is checked too (the retention setting may have changed since they were read).
    """
    start = _retention_start_key()
    condition: Condition = LikeRead.read_key > start
    if before is not None and before[0] == 0:
        end = _before_read_key(before)
        if end < start:
            # The cursor is older than the retention window (e.g. a page that ended on an
            # old read feed entry): nothing read is left after it, and DynamoDB refuses
            # a BETWEEN whose bounds are reversed.
            return []
        condition = LikeRead.read_key.between(start, end)
    items = LikeRead.query(
        user_id,
        range_key_condition=condition,
        filter_condition=LikeRead.expires_at > clock.utcnow(),
        scan_index_forward=False,
        consistent_read=True,
        limit=limit + 2,  # the cursor's own item may be among them (the key range is inclusive)
    )
    notifications = like_notifications(list(items), unread=False)
    if before is not None:
        notifications = [n for n in notifications if n.position < before]
    return notifications[:limit]


def _before_read_key(before: Position) -> str:
    """The largest `read_key` that can sort before the position (the source filters exactly)."""
    prefix = "like:"
    if before[2].startswith(prefix):
        return before[2][len(prefix) :]
    return read_key(read_ns=before[1], comment_id="\uffff")
