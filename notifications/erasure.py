"""What `notifications` keeps about a person: eraser steps and export sections (project/identity/erasure.py).

Removed: the person's like notifications (unread and read), badge items, feed, queued feed
events and mails, the `sends` ledger's lines about them (the ledger guards against mailing a
person twice; nobody mails a deleted account), their preferences and thread states. What they
did to others' notifications is undone by the likes step (their likes leave every "and N
others") and by the comments step (a reply entry in someone's feed then reads "This reply was
removed.").
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Any

from pynamodb.models import Model

from notifications.feed.events import FEED_RETRY_SHARDS
from notifications.feed.selectors import feed_entries_list
from notifications.mail.queue import MAIL_QUEUE_SHARDS, PUSH, mail_queue_key
from notifications.models import (
    Feed,
    FeedRetry,
    LikeRead,
    LikeUnread,
    MailQueue,
    Presence,
    PushSubscription,
    Send,
    ThreadSubscription,
    UnreadCount,
)
from notifications.preferences.selectors import preferences_get
from notifications.preferences.services import preferences_forget
from notifications.push.selectors import subscriptions_shown
from notifications.subjects import subject_comment, subject_kind
from project.identity.erasure import erasure_step, export_section
from social.account.export_words import DELETED_ACCOUNT, comment_texts, iso_time, people_names

PAGE = 100


def _delete_page(model: type[Model], items: list[Any]) -> bool:
    if not items:
        return False
    with model.batch_write() as batch:
        for item in items:
            batch.delete(item)
    return True


def _queued(model: type[FeedRetry] | type[MailQueue], shards: int, key: Any, user_id: str) -> list[Any]:
    """The person's items of a queue sharded by a hash of the user id: one Query of their shard."""
    shard = str(zlib.crc32(user_id.encode()) % shards)
    return list(model.query(shard, key.startswith(f"{user_id}#"), consistent_read=True, limit=PAGE))


def _push_queued(user_id: str) -> list[MailQueue]:
    """The person's pushes waiting in the queue: one Query of their push shard."""
    shard, _ = mail_queue_key(user_id=user_id, source="", channel=PUSH)
    return list(MailQueue.query(shard, MailQueue.mail_id.startswith(f"{user_id}#"), consistent_read=True, limit=PAGE))


@erasure_step(name="notifications", order=30)
def notifications_erase(*, user_id: str, cursor: str | None) -> str | None:
    """Up to PAGE items of the first of the person's notification tables still holding some
    (each a Query of their partition, then BatchWriteItem deletes); "" while any is left.

    Deletes only: again after a crash, what is gone is not found. Runs after the likes step,
    so the fold no longer writes into the authors' items of this person's likes.
    """
    pages: list[tuple[type[Model], Any]] = [
        (LikeUnread, lambda: list(LikeUnread.query(user_id, consistent_read=True, limit=PAGE))),
        (LikeRead, lambda: list(LikeRead.query(user_id, consistent_read=True, limit=PAGE))),
        (UnreadCount, lambda: list(UnreadCount.query(user_id, consistent_read=True, limit=PAGE))),
        (FeedRetry, lambda: _queued(FeedRetry, FEED_RETRY_SHARDS, FeedRetry.retry_id, user_id)),
        (MailQueue, lambda: _queued(MailQueue, MAIL_QUEUE_SHARDS, MailQueue.mail_id, user_id)),
        (MailQueue, lambda: _push_queued(user_id)),
        (Send, lambda: list(Send.query(user_id, consistent_read=True, limit=PAGE))),
        (PushSubscription, lambda: list(PushSubscription.query(user_id, consistent_read=True, limit=PAGE))),
        (Presence, lambda: list(Presence.query(user_id, consistent_read=True, limit=PAGE))),
    ]
    for model, read in pages:
        if _delete_page(model, read()):
            return ""
    Feed(user_id).delete(
        add_version_condition=False
    )  # whatever its version: a writer racing it loses nothing of anyone else
    return None


@erasure_step(name="preferences", order=40)
def preferences_erase(*, user_id: str, cursor: str | None) -> str | None:
    """Preferences and muted / watched threads: `preferences_forget`, as the account's
    post_delete hook does (which then finds nothing left)."""
    preferences_forget(user_id=user_id)
    return None


# --- the export ---------------------------------------------------------------------


def _likers(ids: list[str], names: dict[str, str]) -> list[dict[str, str]]:
    return [{"id": liker, "name": names.get(liker, DELETED_ACCOUNT)} for liker in ids]


@export_section(name="like_notifications", order=30)
def like_notifications_export(*, user_id: str) -> Iterator[dict[str, Any]]:
    """Unread like and reaction notifications, then read ones (newest first): what each is about
    (`kind`, `like` or `reaction`, and the comment's id and text), the people by id and name, a
    read one's time."""
    rows: list[dict[str, Any]] = []
    for unread in LikeUnread.query(user_id, consistent_read=True, page_size=PAGE):
        if int(unread.num_likes or 0):
            rows.append(
                {
                    **_about(unread.comment_id),
                    "unread": True,
                    "liker_ids": list(unread.liker_ids or []),
                    "num_likes": int(unread.num_likes or 0),
                    "updated_at": iso_time(unread.updated_at),
                }
            )
        if len(rows) >= PAGE:
            yield from _readable(rows)
            rows = []
    for read in LikeRead.query(user_id, consistent_read=True, scan_index_forward=False, page_size=PAGE):
        rows.append(
            {
                **_about(read.comment_id),
                "unread": False,
                "liker_ids": list(read.liker_ids or []),
                "num_likes": int(read.num_likes or 0),
                "updated_at": iso_time(read.updated_at),
                "read_at": iso_time(read.read_at),
            }
        )
        if len(rows) >= PAGE:
            yield from _readable(rows)
            rows = []
    yield from _readable(rows)


def _about(subject: str) -> dict[str, str]:
    """A fold subject as a person reads it: a comment's likes or its reactions, and the comment."""
    return {"kind": subject_kind(subject), "comment_id": subject_comment(subject)}


def _readable(rows: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """A page of like notifications with names beside the likers' ids and the comment's text."""
    if not rows:
        return
    names = people_names(liker for row in rows for liker in row["liker_ids"])
    texts = comment_texts(row["comment_id"] for row in rows)
    for row in rows:
        yield {**row, "likers": _likers(row["liker_ids"], names), "comment_text": texts[row["comment_id"]]}


@export_section(name="feed", order=35)
def feed_export(*, user_id: str) -> Iterator[dict[str, Any]]:
    """The feed's entries (at most FEED_MAX_ENTRIES, one item), as the API shows them."""
    for entry in feed_entries_list(user_id=user_id).results:
        yield {
            "id": entry.id,
            "kind": entry.kind,
            "text": entry.text,
            "title": entry.title,
            "body": entry.body,
            "url": entry.url,
            "unread": entry.unread,
            "actor_ids": [actor.id for actor in entry.actors],
            "actors": [{"id": actor.id, "name": actor.display_name} for actor in entry.actors],
            "created_at": entry.created_at.isoformat(),
            "updated_at": entry.updated_at.isoformat(),
        }


@export_section(name="preferences", order=40, single=True)
def preferences_export(*, user_id: str) -> Iterator[dict[str, Any]]:
    yield preferences_get(user_id=user_id, consistent=True).as_json()


@export_section(name="thread_subscriptions", order=45)
def threads_export(*, user_id: str) -> Iterator[dict[str, Any]]:
    for entry in ThreadSubscription.by_user.query(user_id, page_size=PAGE):
        yield {"thread_id": entry.thread_id, "state": entry.state, "at": iso_time(entry.at)}


@export_section(name="push_subscriptions", order=47)
def push_subscriptions_export(*, user_id: str) -> Iterator[dict[str, Any]]:
    """The person's browsers subscribed to push: the push service's host, the device's name,
    when subscribed and last used; never the endpoint's path or the keys (what a push is
    encrypted to: not the person's data, and enough to send them pushes)."""
    for view in subscriptions_shown(user_id=user_id):
        yield {
            "id": view.id,
            "endpoint_host": view.endpoint_host,
            "device": view.device,
            "created_at": view.created_at.isoformat(),
            "last_used_at": view.last_used_at.isoformat() if view.last_used_at else None,
        }


@export_section(name="mail_sent", order=50)
def sends_export(*, user_id: str) -> Iterator[dict[str, Any]]:
    for line in Send.query(user_id, consistent_read=True, page_size=PAGE):
        yield {
            "channel": line.channel,
            "kind": line.kind,
            "source": line.source,
            "state": line.state,
            "address": line.address,
            "subject": line.subject,
            "at": iso_time(line.at),
        }
