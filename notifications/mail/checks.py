"""What a mail is about, read again at send time, and whether it may still go.

Every check here is a strongly consistent read made just before the ledger claim: the
entry (or like notification) still unread, the kind's e-mail still on, the thread not
muted, nothing from someone the reader blocked or muted, an active account with a verified
address. Whatever changed since the mail was
scheduled wins; a check that fails becomes a `skipped` ledger line with its reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils import translation
from pynamodb.exceptions import DoesNotExist

from notifications.feed.selectors import feed_entry_views, feed_read
from notifications.like_selectors import like_notifications
from notifications.mail.account import ACCOUNT, ACCOUNT_MAILS
from notifications.models import LikeUnread
from notifications.preferences.selectors import preferences_get, thread_state
from notifications.selectors import _excerpt, notification_inbox
from notifications.subjects import LIKE, REACTION, reaction_subject
from project.http.locales import language_of
from social.formatting import markdown_html
from social.relations.selectors import silenced_ids
from social.selectors import comment_find, comment_thread_id

QUIET = "quiet"  # the quiet hours' roll-up mail (notifications/mail/quiet.py): its kind in the queue


@dataclass(frozen=True)
class Recipient:
    user_id: str
    username: str
    name: str
    address: str
    # Read in the same row as the address (no extra read): the mail's language ("" = the
    # site's), the time zone its digest hour and quiet hours are in ("" = the site's).
    locale: str = ""
    time_zone: str = ""
    digest_hour: int | None = None
    quiet_start: int | None = None
    quiet_end: int | None = None

    @property
    def language(self) -> str:
        """The language the recipient's mails are worded in."""
        return language_of(self.locale) or settings.LANGUAGE_CODE


@dataclass(frozen=True)
class About:
    """What happened, for the mail's subject and body."""

    kind: str
    text: str  # "Bob replied to your comment"
    excerpt: str  # the reply's (or message's) first words
    path: str  # where to read it on the site (a path; the mail prefixes SITE_URL)
    comment_id: str | None = None  # whose thread a mute silences
    actor_ids: tuple[str, ...] = ()  # who it names (a like's first likers)
    names: tuple[str, ...] = ()  # the display names `text` opens with, in order (quoted in the subject)
    html: str = ""  # the comment rendered as pages show it (social.formatting), for the HTML mail
    count: int = 1  # the people (or likes) the notification rolls up
    entry_id: str = ""  # the notification's feed entry (a like's: its comment id)


@dataclass(frozen=True)
class Verdict:
    recipient: Recipient | None = None
    about: About | None = None
    skip: str = ""  # why nothing goes (empty: send)


def recipient_get(*, user_id: str) -> Recipient | Verdict:
    """The account's name and verified address, or a Verdict saying why it gets no mail."""
    return recipients_get(user_ids=[user_id])[user_id]


def recipients_get(*, user_ids: list[str]) -> dict[str, Recipient | Verdict]:
    """`recipient_get` of several people from one query of their user rows (language, time zone,
    quiet hours and digest hour come in the same rows as the addresses)."""
    numbers = [int(user_id) for user_id in user_ids if user_id.isdigit()]
    users = {str(user.pk): user for user in get_user_model().objects.filter(pk__in=numbers)}
    found: dict[str, Recipient | Verdict] = {}
    for user_id in user_ids:
        user = users.get(user_id)
        if user is None or not user.is_active:
            found[user_id] = Verdict(skip="no active account")
        elif not user.email:
            found[user_id] = Verdict(skip="no e-mail address")
        elif not user.email_verified:
            found[user_id] = Verdict(skip="e-mail address not verified")
        else:
            found[user_id] = recipient_of(user)
    return found


def recipient_of(user: Any) -> Recipient:
    return Recipient(
        user_id=str(user.pk),
        username=user.username,
        name=user.shown_name,
        address=user.email,
        locale=user.locale,
        time_zone=user.time_zone,
        digest_hour=user.digest_hour,
        quiet_start=user.quiet_start,
        quiet_end=user.quiet_end,
    )


def like_comment_id(entry_id: str) -> str:
    """A like (reaction) mail's `entry_id` is the comment's id (`like:<comment_id>` accepted too)."""
    return entry_id.removeprefix("like:")


# Why there is nothing unread to tell about any more (the ledger's reason, the notification log's words).
READ_BEFORE = "read before send"
RETRACTED = "retracted: no longer in the inbox (a block or mute, an unlike, a hidden or deleted comment)"


def about_unread(*, user_id: str, kind: str, entry_id: str) -> About | None:
    """What the unread entry (or like notification) says; None when it is read or gone by now."""
    about = about_unread_or_why(user_id=user_id, kind=kind, entry_id=entry_id)
    return about if isinstance(about, About) else None


def about_unread_or_why(*, user_id: str, kind: str, entry_id: str) -> About | str:
    """What the unread entry (or like notification) says, or why nothing: READ_BEFORE (read by
    now) or RETRACTED (taken out of the inbox since: the entry, or every like of it, is gone)."""
    if kind in (LIKE, REACTION):
        comment_id = like_comment_id(entry_id)
        subject = reaction_subject(comment_id) if kind == REACTION else comment_id
        try:
            item = LikeUnread.get(user_id, subject, consistent_read=True)
        except DoesNotExist:
            return RETRACTED
        if not int(item.num_likes or 0):  # read (which clears `unliked_ids`), or every like undone
            return RETRACTED if item.unliked_ids else READ_BEFORE
        (notification,) = like_notifications([item], unread=True)
        comment = comment_find(comment_id=comment_id)
        body = comment.body if comment and not comment.hidden and not comment.deleted_at else ""
        actor_ids = tuple(actor.id for actor in notification.actors)
        names = tuple(actor.display_name for actor in notification.actors)
        return About(
            kind,
            notification.text,
            _excerpt(body),
            notification.url,
            comment_id=comment_id,
            actor_ids=actor_ids,
            names=names,
            html=markdown_html(body),
            count=int(item.num_likes),
            entry_id=comment_id,
        )
    feed = feed_read(user_id=user_id)
    entries = [entry for entry in feed.entries if entry.entry_id == entry_id]
    if not entries:
        return RETRACTED  # a read entry stays in the feed; an unread one leaves it only retracted
    if entries[0].read:
        return READ_BEFORE
    (view,) = feed_entry_views(entries, silenced=frozenset(feed.silenced or ()))
    if view.removed or view.hidden:  # hidden: it names only people the reader blocked or muted
        return RETRACTED
    thread_comment_id = entries[0].object_id if kind != "message" else None
    names = tuple(actor.display_name for actor in view.actors[:2])
    # A comment's body is Markdown; a message from the staff is plain text (the HTML mail escapes it).
    html = markdown_html(view.body) if kind != "message" else ""
    path = view.url or "/notifications/"
    return About(
        kind,
        view.text,
        _excerpt(view.body),
        path,
        comment_id=thread_comment_id,
        names=names,
        html=html,
        count=max(int(view.actor_count), 1),
        entry_id=entry_id,
    )


def unread_items(*, user_id: str, limit: int) -> tuple[list[About], int]:
    """The person's unread inbox items (at most `limit`, newest first, worded in the active
    language) and how many more: what a digest or a quiet hours' roll-up lists."""
    page = notification_inbox(user_id=user_id, limit=limit, excerpts=True)
    unread = [n for n in page.results if n.unread]
    items = [About(n.kind, n.text, n.excerpt, n.url or "/notifications/", comment_id=n.comment_id) for n in unread]
    return items, max(0, page.unread_count - len(items))


def thread_muted(*, user_id: str, comment_id: str | None) -> bool:
    if not comment_id:
        return False
    comment = comment_find(comment_id=comment_id)
    if comment is None:
        return False
    return thread_state(thread_id=comment_thread_id(comment), user_id=user_id) == "mute"


def mail_verdict(*, user_id: str, kind: str, entry_id: str) -> Verdict:
    """Whether the mail about `entry_id` may go to `user_id` now, and what it says."""
    found = recipient_get(user_id=user_id)
    if isinstance(found, Verdict):
        return found
    with translation.override(found.language):  # texts worded for the recipient, now
        return _verdict_for(found, kind=kind, entry_id=entry_id)


def _verdict_for(found: Recipient, *, kind: str, entry_id: str) -> Verdict:
    user_id = found.user_id
    if kind == QUIET:  # the roll-up of quiet hours: what is unread is read when it is built
        return Verdict(recipient=found, about=About(kind, "", "", "/notifications/"))
    if kind == ACCOUNT:  # about the account itself: always, whatever the settings
        subject, text, path = ACCOUNT_MAILS[entry_id]
        return Verdict(recipient=found, about=About(kind, str(subject), str(text), path))
    if not preferences_get(user_id=user_id, consistent=True).wants(kind, "email"):
        return Verdict(skip=f"e-mail for {kind} turned off")
    about = about_unread_or_why(user_id=user_id, kind=kind, entry_id=entry_id)
    if about == READ_BEFORE:
        return Verdict(skip="read in the inbox before the mail was due")
    if not isinstance(about, About):
        return Verdict(skip=about)
    if thread_muted(user_id=user_id, comment_id=about.comment_id):
        return Verdict(skip="thread muted")
    if about.actor_ids and set(about.actor_ids) <= silenced_ids(user_id=user_id):
        # A like notification whose fold has not taken the blocked liker out yet (one Query).
        return Verdict(skip="from someone the reader blocked or muted")
    return Verdict(recipient=found, about=about)
