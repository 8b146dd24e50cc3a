"""What a like fold decides from what it read: the pure part of the fold
(docs/explanation/likes.md "Like events and the fold").

`reads.batch_read` reads a batch (the notification, the likers' rows and markers, the
author's choices and their state in the comment's thread) into a `Fold` and its
`FoldFacts`, and `fold_decide` decides, once per batch and with no I/O: who is notified,
whose like is withdrawn from the unread notification, the new liker list and count, the
likers who unliked or came back, whether a mail or a push is due, and which likers of the
last fold still lack their marker.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field, replace

from notifications.models import LikeEvent, LikeUnread, UnreadCount


@dataclass
class Fold:
    """What one fold read and decided for one comment."""

    comment_id: str
    author_id: str
    events: list[LikeEvent]
    unread: LikeUnread | None
    badge: UnreadCount | None = None
    new_list: list[str] = field(default_factory=list)
    new_count: int = 0
    notify: list[str] = field(default_factory=list)
    withdraw: list[str] = field(default_factory=list)
    # Likers the last fold notified whose marker is not written yet (it died before): written first.
    unmarked: list[str] = field(default_factory=list)
    # The writes of `unmarked`'s markers, when the previous batch of this very folder is making them.
    markers_in_flight: list[Future[None]] | None = None
    new_unliked: list[str] = field(default_factory=list)
    new_restored: list[str] = field(default_factory=list)
    mail: bool = False  # the author wants likes by e-mail, and this fold makes the notification unread
    push: bool = False  # the author wants likes by push, and this fold notifies of someone

    @property
    def changes(self) -> bool:
        """Whether the notification changes (else the fold completes the last one and deletes its events)."""
        return bool(self.notify or self.withdraw)

    @property
    def old_list(self) -> list[str]:
        return list(self.unread.liker_ids or []) if self.unread else []

    @property
    def old_count(self) -> int:
        return int(self.unread.num_likes or 0) if self.unread else 0

    @property
    def old_seq(self) -> int:
        return int(self.unread.seq or 0) if self.unread else 0

    @property
    def old_unliked(self) -> list[str]:
        return list(self.unread.unliked_ids or []) if self.unread else []

    @property
    def old_restored(self) -> list[str]:
        return list(self.unread.restored_ids or []) if self.unread else []

    @property
    def journal(self) -> list[str]:
        return list(self.unread.fold_notified or []) if self.unread else []


@dataclass(frozen=True)
class FoldFacts:
    """What the fold read, reduced to what the decision needs."""

    likers: list[str]  # the batch's likers in event order, the author's own likes left out
    liking: Collection[str]  # those whose like row exists, less the people the author blocked or muted
    notified_at: Mapping[str, float]  # liker -> when a fold last notified of them (their marker)
    visible: bool  # the comment exists and is neither hidden nor deleted
    hears: bool  # the author takes like notifications of it (likes on, its thread not muted)
    mail_wanted: bool  # the author wants like notifications by e-mail
    now: float
    window: float  # seconds during which the same person's like does not notify again
    most: int  # liker ids an unread notification keeps
    push_wanted: bool = False  # the author wants like notifications by Web Push


def fold_decide(fold: Fold, facts: FoldFacts) -> Fold:
    """The fold with its decision filled in (`fold` itself is left as it was)."""
    decided = replace(
        fold,
        new_list=fold.old_list,
        new_count=fold.old_count,
        new_unliked=fold.old_unliked,
        new_restored=fold.old_restored,
        unmarked=[liker for liker in fold.journal if liker not in facts.notified_at],
        notify=[],
        withdraw=[],
        mail=False,
        push=False,
    )
    if not facts.visible:  # likes on a hidden or deleted comment notify nobody
        return decided
    listed = fold.old_list
    decided.withdraw = [liker for liker in facts.likers if liker not in facts.liking and liker in listed]
    decided.new_list = [liker for liker in listed if liker not in decided.withdraw]
    decided.new_count = fold.old_count - len(decided.withdraw)
    # Within the window a marker stays, whatever happened since (an unlike, a read): the
    # same person liking the same comment again does not notify the author again, unless
    # their like was withdrawn from this still unread notification (it is put back).
    since = facts.now - facts.window
    recently = {liker for liker, at in facts.notified_at.items() if at >= since} | set(decided.unmarked)
    recently -= set(fold.old_unliked)
    # Withdrawals first: a place they free goes to a later like of the same batch. Likes off,
    # or the thread muted: nobody is listed, the count still counts.
    if facts.hears:
        decided.notify = [
            liker for liker in facts.likers if liker in facts.liking and liker not in recently and liker not in listed
        ]
    for liker in decided.notify:
        decided.new_count += 1
        if len(decided.new_list) < facts.most:
            decided.new_list.append(liker)
    restored = fold.old_restored + [liker for liker in decided.notify if liker in fold.old_unliked]
    unliked = [liker for liker in fold.old_unliked if liker not in decided.notify]
    unliked += [liker for liker in decided.withdraw if liker not in restored]
    # Bounded like the list: a liker dropped from `unliked` is not put back until the read,
    # one dropped from `restored` may be put back once more.
    decided.new_unliked, decided.new_restored = unliked[-facts.most :], restored[-facts.most :]
    # From nothing unread to unread: the one moment a like notification asks for an e-mail.
    decided.mail = fold.old_count == 0 and decided.new_count > 0 and facts.mail_wanted
    # A push for every fold that names someone new: its Topic (the comment) replaces the last one.
    decided.push = bool(decided.notify) and facts.push_wanted
    return decided
