"""Tables of the `notifications` room (docs/reference/tables.md "Tables")."""

from pynamodb.attributes import (
    BooleanAttribute,
    ListAttribute,
    MapAttribute,
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UnicodeSetAttribute,
    VersionAttribute,
)
from pynamodb.indexes import (
    AllProjection,
    GlobalSecondaryIndex,
    IncludeProjection,
    KeysOnlyProjection,
    LocalSecondaryIndex,
)
from pynamodb.models import Model

from notifications.feed.encoding import EventDigestsAttribute, FeedEntry, FeedRecordsAttribute
from project.dynamo.clients import table_meta


class UnreadLikesIndex(LocalSecondaryIndex):
    """A recipient's like notifications by `num_likes`: `num_likes > 0` are the unread ones."""

    class Meta:
        index_name = "by_num_likes"
        projection = AllProjection()

    user_id = UnicodeAttribute(hash_key=True)
    num_likes = NumberAttribute(range_key=True)


class LikeUnread(Model):
    """The unread like notification of one comment for its author.

    Created empty when the comment is posted, so a like is always an update, never
    an upsert; reset to empty when read.
    """

    Meta = table_meta("like_unread")

    user_id = UnicodeAttribute(hash_key=True)  # the comment's author (recipient)
    comment_id = UnicodeAttribute(range_key=True)
    # PynamoDB types ListAttribute's `of` as the element's Python type (str), but it takes the
    # attribute class (UnicodeAttribute): each ignore below is that mismatch.
    liker_ids = ListAttribute[str](of=UnicodeAttribute, default=list)  # type: ignore[arg-type]  # oldest first
    num_likes = NumberAttribute(default=0)
    updated_at = UnicodeAttribute()
    # Every fold and mark-read adds 1; the badge item carries the `seq` it was brought to,
    # so a late write never overwrites a newer state (notifications/like_fold/).
    seq = NumberAttribute(null=True)
    # The likers the last fold notified, and when: a fold that died before writing their
    # markers is completed by the next fold of the comment.
    fold_notified = ListAttribute[str](of=UnicodeAttribute, null=True)  # type: ignore[arg-type]
    fold_at = NumberAttribute(null=True)
    # Since the last read: listed likers who unliked (withdrawn), whose like again is put back
    # although their `like_notified` marker is recent, and the likers put back so (once each).
    unliked_ids = ListAttribute[str](of=UnicodeAttribute, null=True)  # type: ignore[arg-type]
    restored_ids = ListAttribute[str](of=UnicodeAttribute, null=True)  # type: ignore[arg-type]

    by_num_likes = UnreadLikesIndex()


def read_key(*, read_ns: int, comment_id: str) -> str:
    """`like_read` sort key: read time in ns (zero-padded, so it sorts) joined with the comment id.

    Two notifications read in the same nanosecond (one transaction marks many) differ
    by comment id, so they cannot overwrite each other.
    """
    return f"{read_ns:020d}#{comment_id}"


class LikeRead(Model):
    """A like notification after it was read: history, expired by TTL after the retention period."""

    Meta = table_meta("like_read")

    user_id = UnicodeAttribute(hash_key=True)
    # Read time in nanoseconds, zero-padded, joined with the comment id: two
    # notifications read in the same instant cannot collide (the seed accepted that risk).
    read_key = UnicodeAttribute(range_key=True)
    comment_id = UnicodeAttribute()
    liker_ids = ListAttribute[str](of=UnicodeAttribute, default=list)  # type: ignore[arg-type]
    num_likes = NumberAttribute(default=0)
    updated_at = UnicodeAttribute()  # when the last like of this notification arrived
    read_at = UnicodeAttribute()
    expires_at = TTLAttribute()


class UnreadCountIndex(LocalSecondaryIndex):
    class Meta:
        index_name = "by_count"
        projection = KeysOnlyProjection()

    user_id = UnicodeAttribute(hash_key=True)
    count = NumberAttribute(range_key=True)  # type: ignore[assignment]  # shadows the unused Index.count()


class UnreadCount(Model):
    """One source of a user's unread badge (`like#<comment_id>`, `feed`).

    The badge is the sum of the items with `count > 0`, read with one LSI Query.
    """

    Meta = table_meta("unread_counts")

    user_id = UnicodeAttribute(hash_key=True)
    source = UnicodeAttribute(range_key=True)
    count = NumberAttribute(default=0)  # type: ignore[assignment]  # shadows the unused Model.count()
    seq = NumberAttribute(null=True)  # like sources: the notification's `seq` this count is from

    by_count = UnreadCountIndex()


def unread_count_set(count: int):
    """The update action that sets a badge source's count: 0 removes the attribute, so the item
    leaves the sparse `by_count` index (one index write, where moving the entry to 0 is two)
    and reads as 0 (the attribute's default)."""
    return UnreadCount.count.set(count) if count > 0 else UnreadCount.count.remove()


# --- like events ----------------------------------------------------------------


class LikeEvent(Model):
    """A like or unlike waiting to be folded into its author's notification (the like's outbox).

    Put in the like's own transaction under a key nobody else writes, so likes of one
    comment never touch a shared item; deleted once a fold has taken it into account. No
    index: the table holds only pending events, so the folder finds them with a Scan.
    """

    Meta = table_meta("like_events")

    comment_id = UnicodeAttribute(hash_key=True)
    event_id = UnicodeAttribute(range_key=True)  # <time ns, zero-padded>#<random>: oldest first
    author_id = UnicodeAttribute()
    liker_id = UnicodeAttribute()
    kind = UnicodeAttribute()  # like, unlike, silence (a block's trigger: notifications/silence.py)
    created_at = NumberAttribute()  # epoch seconds (fold lag)
    # True: the liking request folds it once answered, and the polling folder leaves it to that
    # request for REQUEST_FOLD_GRACE_SECONDS (notifications/like_fold/).
    request_folds = BooleanAttribute(null=True)
    # The comment's thread (social.selectors.comment_thread_id), as the like read it: the fold
    # reads the author's state in it with its other reads (absent: a GetItem of its own).
    thread_id = UnicodeAttribute(null=True)


class LikeNotified(Model):
    """A liker whose like reached the author's notification of a comment (listed or overflow), and when.

    Kept through an unlike and a read: the same person liking the same comment again within
    LIKE_RENOTIFY_WINDOW_HOURS of `notified_at` notifies nobody. TTL drops it after that
    (the fold checks `notified_at` itself, as TTL deletes late).
    """

    Meta = table_meta("like_notified")

    comment_id = UnicodeAttribute(hash_key=True)
    user_id = UnicodeAttribute(range_key=True)
    notified_at = NumberAttribute(null=True)  # epoch seconds; absent on markers from before the window
    expires_at = TTLAttribute(null=True)


# --- feed -------------------------------------------------------------------


class LegacyFeedEntry(MapAttribute):
    """An entry stored as a map with its text inline (the map format); read, never written.

    Goes with `legacy_feed_upgrade` (notifications/feed/encoding.py says when).
    """

    entry_id = UnicodeAttribute()
    kind = UnicodeAttribute()
    rollup_key = UnicodeAttribute(null=True)
    actor_ids = ListAttribute[str](of=UnicodeAttribute, default=list)  # type: ignore[arg-type]
    actor_count = NumberAttribute(default=0)
    event_count = NumberAttribute(default=1)
    title = UnicodeAttribute(default="")
    body = UnicodeAttribute(default="")
    url = UnicodeAttribute(default="")
    delivery_id = UnicodeAttribute(null=True)
    created_at = UnicodeAttribute()
    updated_at = UnicodeAttribute()
    read = BooleanAttribute(default=False)


class Feed(Model):
    """One item per user (docs/explanation/feed.md "The feed"): its entries newest first, at most
    FEED_MAX_ENTRIES, written only through notifications/feed/services.py.

    Every write is a whole-item put conditioned on `version` (optimistic locking), so two
    writers that read the same version cannot both win: the loser re-reads and merges again.
    The entries are small packed records (notifications/feed/encoding.py) in `p`, the digests
    of the events applied in `h`.
    """

    Meta = table_meta("feed")

    user_id = UnicodeAttribute(hash_key=True)
    records = FeedRecordsAttribute(attr_name="p", null=True, default=list)
    # Digests of the most recent events applied, newest last: applying an event again
    # (a retry after an ambiguous failure) finds its digest here and writes nothing.
    applied = EventDigestsAttribute(attr_name="h", null=True, default=list)
    # The map format, read by `feed_read` through `legacy_feed_upgrade`.
    legacy_entries = ListAttribute(of=LegacyFeedEntry, attr_name="entries", null=True)
    legacy_event_ids = ListAttribute[str](of=UnicodeAttribute, attr_name="event_ids", null=True)  # type: ignore[arg-type]
    updated_at = UnicodeAttribute(null=True)
    # The people the owner blocked or muted, as the feed knows them (notifications/silence.py
    # keeps it in step with social's `blocks` table): the merge refuses their events, so a reply
    # racing a block is either refused here or retracted by the block's own feed write.
    silenced = UnicodeSetAttribute(attr_name="s", null=True)
    version = VersionAttribute()

    @property
    def entries(self) -> list[FeedEntry]:
        """The entries decoded (every field), newest first: a copy, so a change to one is stored
        only by assigning `records` (`records` alone when only their heads are needed)."""
        return [record.entry() for record in self.records]


class FeedRetryDueIndex(LocalSecondaryIndex):
    """A shard's retries by due time: the drainer queries `due_at <= now` (no Scan)."""

    class Meta:
        index_name = "by_due"
        projection = AllProjection()

    shard = UnicodeAttribute(hash_key=True)
    due_at = NumberAttribute(range_key=True)


class FeedRetry(Model):
    """A feed event waiting to be applied (the feed's retry queue, without a broker), or an
    outbox job (notifications/outbox.py).

    An event is put when a feed write runs out of retries or throughput, and deleted once
    it is applied (or found applied). A job (a comment's fan-out, a block's retraction) is
    put in the same transaction as the write that promises it (a crash right after the
    write cannot lose it), keeps its progress, and is deleted when done.
    """

    Meta = table_meta("feed_retry")

    shard = UnicodeAttribute(hash_key=True)  # "0".."N-1", from a hash of the user id (a job's `shard_key`)
    retry_id = UnicodeAttribute(range_key=True)  # <user_id>#<event_id>, a job's <kind>#<job id>
    user_id = UnicodeAttribute()
    event = UnicodeAttribute()  # the FeedEvent as JSON, a job's {"<kind>": {...}}
    due_at = NumberAttribute()  # epoch milliseconds; also the lease of the worker applying it
    attempts = NumberAttribute(default=0)
    last_error = UnicodeAttribute(default="")
    created_at = UnicodeAttribute()

    by_due = FeedRetryDueIndex()


# --- e-mail (notifications/mail/) ---------------------------------------------


class MailQueueDueIndex(LocalSecondaryIndex):
    """A shard's mails by due time: the sender queries `due_at <= now` (no Scan)."""

    class Meta:
        index_name = "by_due"
        projection = AllProjection()

    shard = UnicodeAttribute(hash_key=True)
    due_at = NumberAttribute(range_key=True)


class MailQueue(Model):
    """A notification e-mail (or Web Push) waiting for its due time (notifications/mail/queue.py).

    Put in the same transaction as the feed entry (or the broadcast target's delete) it
    is about, so "entry written" and "mail scheduled" commit together; deleted by the
    sender once the mail's ledger line (`Send`) says what happened. `due_at` is also the
    lease of the sender working on it.
    """

    Meta = table_meta("mail_queue")

    shard = UnicodeAttribute(hash_key=True)  # "0".."N-1" (push: "push#0"..), from a hash of the user id
    mail_id = UnicodeAttribute(range_key=True)  # <user_id>#<source>
    channel = UnicodeAttribute(default="email")  # email, push (absent on items put before push: email)
    user_id = UnicodeAttribute()
    kind = UnicodeAttribute()  # like, reply, mention, message
    source = UnicodeAttribute()  # the feed event id (like:<comment>:<seq>, delivery:<id>, ...)
    entry_id = UnicodeAttribute(default="")  # the feed entry (or like:<comment_id>) to find unread
    due_at = NumberAttribute()  # epoch milliseconds
    attempts = NumberAttribute(default=0)
    created_at = NumberAttribute()  # epoch milliseconds

    by_due = MailQueueDueIndex()


class SendsBySourceIndex(GlobalSecondaryIndex):
    """A source's ledger lines (`delivery#<id>`, a reply's event id): who was sent it, and how it went."""

    class Meta:
        index_name = "by_source"
        projection = AllProjection()

    source = UnicodeAttribute(hash_key=True)
    user_id = UnicodeAttribute(range_key=True)


class Send(Model):
    """The ledger: one line per person, channel and source, saying what was sent (notifications/mail/services.py).

    Put `sending` on condition it is absent before a mail goes out, so one sender of all
    the concurrent ones sends it; set `sent` (or `failed`) after. A line still `sending`
    after its lease is `unknown`: the sender died between sending and marking, and the
    mail is never sent again. `skipped` lines say why nothing was sent (read by then,
    muted, e-mail off, address not verified, a limit).
    """

    Meta = table_meta("sends")

    user_id = UnicodeAttribute(hash_key=True)
    line = UnicodeAttribute(range_key=True)  # <channel>#<source>
    channel = UnicodeAttribute()  # email, push
    source = UnicodeAttribute()  # the queue item's source, digest:<daily|weekly>:<period>
    kind = UnicodeAttribute()  # like, reply, mention, message, digest
    state = UnicodeAttribute()  # sending, sent, failed, skipped
    reason = UnicodeAttribute(default="")  # why skipped or failed
    entry_id = UnicodeAttribute(default="")
    address = UnicodeAttribute(default="")  # where it went (the address at send time)
    subject = UnicodeAttribute(default="")
    token = UnicodeAttribute(default="")  # the claimer's: only it marks the line
    at = NumberAttribute()  # epoch milliseconds of the last change
    lease_until = NumberAttribute(default=0)  # epoch ms: past it, a line still `sending` is `unknown`
    # NOTIFICATION_READ_RETENTION_DAYS after the line was put (an entry's marker: MAIL_LEDGER_DAYS).
    # No mail depends on an expired line: its queue item was deleted when the line got its
    # outcome, and a digest's period is long past.
    expires_at = TTLAttribute(null=True)

    by_source = SendsBySourceIndex()


# --- preferences and threads (notifications/preferences/) ------------------------


class DigestReadersIndex(GlobalSecondaryIndex):
    """People who chose a digest, by `<daily|weekly>#<HH:MM>` (sparse: only while the digest is on):
    the quarter hour of UTC their local digest hour falls on at their zone's offset of a fixed
    day (notifications/preferences/digest_slots.py), so a digest pass Queries only the two or
    three slots that may be due. Readers listed before slots are under `<daily|weekly>#<0-3>`
    until the pass that reads every slot moves them.
    """

    class Meta:
        index_name = "digest"
        projection = KeysOnlyProjection()

    digest_key = UnicodeAttribute(hash_key=True)
    user_id = UnicodeAttribute(range_key=True)


class Preferences(Model):
    """What reaches one person (notifications/preferences/): a flag per kind and channel, the digest.

    A flag that is absent is the default (inbox on, e-mail and push off), so a person who never chose
    has no item at all. Each flag is its own attribute, so a change is an UpdateItem that SETs
    only the flags sent: two changes of different flags never undo each other.
    """

    Meta = table_meta("preferences")

    user_id = UnicodeAttribute(hash_key=True)
    like_inbox = BooleanAttribute(null=True)
    like_email = BooleanAttribute(null=True)
    reaction_inbox = BooleanAttribute(null=True)
    reaction_email = BooleanAttribute(null=True)
    reply_inbox = BooleanAttribute(null=True)
    reply_email = BooleanAttribute(null=True)
    mention_inbox = BooleanAttribute(null=True)
    mention_email = BooleanAttribute(null=True)
    message_inbox = BooleanAttribute(null=True)  # never stored false: staff messages always reach the inbox
    message_email = BooleanAttribute(null=True)
    like_push = BooleanAttribute(null=True)
    reaction_push = BooleanAttribute(null=True)
    reply_push = BooleanAttribute(null=True)
    mention_push = BooleanAttribute(null=True)
    message_push = BooleanAttribute(null=True)
    digest = UnicodeAttribute(null=True)  # off, daily, weekly; absent = off
    digest_key = UnicodeAttribute(null=True)  # present exactly while `digest` is daily or weekly
    updated_at = NumberAttribute(null=True)  # epoch milliseconds

    by_digest = DigestReadersIndex()


class ThreadSubscriptionsByUserIndex(GlobalSecondaryIndex):
    """A person's muted and watched threads (the settings page's lists)."""

    class Meta:
        index_name = "by_user"
        projection = IncludeProjection(["state", "at"])

    user_id = UnicodeAttribute(hash_key=True)
    thread_id = UnicodeAttribute(range_key=True)


class ThreadSubscription(Model):
    """One person's state in one thread: `watch` or `mute`, one item, so the two exclude each other.

    PK the thread: a reply's fan-out reads every watcher and muter of its thread with one
    consistent Query. No item = neither (the default).
    """

    Meta = table_meta("thread_subscriptions")

    thread_id = UnicodeAttribute(hash_key=True)  # the root comment's id
    user_id = UnicodeAttribute(range_key=True)
    state = UnicodeAttribute()  # watch, mute
    at = NumberAttribute()  # epoch milliseconds of the last change

    by_user = ThreadSubscriptionsByUserIndex()


# --- Web Push (notifications/push/) ---------------------------------------------


class PushSubscription(Model):
    """One browser's Web Push subscription for one person (notifications/push/services.py).

    Keyed by a digest of the endpoint, so the same browser subscribing again is the same
    item. The keys are the browser's public encryption key and auth secret (RFC 8291): what a
    push is encrypted to; the endpoint's host is one of PUSH_SERVICE_HOSTS.
    """

    Meta = table_meta("push_subscriptions")

    user_id = UnicodeAttribute(hash_key=True)
    subscription_id = UnicodeAttribute(range_key=True)  # blake2b of the endpoint, 32 hex digits
    endpoint = UnicodeAttribute()
    p256dh = UnicodeAttribute()  # base64url, the browser's P-256 public key
    auth = UnicodeAttribute()  # base64url, 16 bytes
    device = UnicodeAttribute(default="")  # what the browser called itself (User-Agent, shortened)
    created_at = NumberAttribute()  # epoch milliseconds
    last_used_at = NumberAttribute(default=0)  # epoch ms of the last push the service took (201)


class Presence(Model):
    """When a person's open page last polled (notifications/presence.py): while that is within
    NOTIFY_PRESENT_SECONDS, they see their notifications arrive, and no push or e-mail goes."""

    Meta = table_meta("presence")

    user_id = UnicodeAttribute(hash_key=True)
    seen_at = NumberAttribute()  # epoch milliseconds
    expires_at = TTLAttribute(null=True)  # a day after: TTL deletes it
