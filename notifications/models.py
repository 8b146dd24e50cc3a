"""Tables of the `notifications` room (DESIGN.md 3, seeds 000 and 002)."""

from pynamodb.attributes import ListAttribute, NumberAttribute, TTLAttribute, UnicodeAttribute
from pynamodb.indexes import AllProjection, KeysOnlyProjection, LocalSecondaryIndex
from pynamodb.models import Model

from project.dynamo import table_meta


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
    liker_ids = ListAttribute(of=UnicodeAttribute, default=list)  # oldest first
    num_likes = NumberAttribute(default=0)
    updated_at = UnicodeAttribute()

    by_num_likes = UnreadLikesIndex()


class LikeRead(Model):
    """A like notification after it was read: history, expired by TTL after the retention period."""

    Meta = table_meta("like_read")

    user_id = UnicodeAttribute(hash_key=True)
    # Read time in nanoseconds, zero-padded, joined with the comment id: two
    # notifications read in the same instant cannot collide (the seed accepted that risk).
    read_key = UnicodeAttribute(range_key=True)
    comment_id = UnicodeAttribute()
    liker_ids = ListAttribute(of=UnicodeAttribute, default=list)
    num_likes = NumberAttribute(default=0)
    updated_at = UnicodeAttribute()  # when the last like of this notification arrived
    read_at = UnicodeAttribute()
    expires_at = TTLAttribute()


class UnreadCountIndex(LocalSecondaryIndex):
    class Meta:
        index_name = "by_count"
        projection = KeysOnlyProjection()

    user_id = UnicodeAttribute(hash_key=True)
    count = NumberAttribute(range_key=True)


class UnreadCount(Model):
    """One source of a user's unread badge (`like#<comment_id>`, `feed`).

    The badge is the sum of the items with `count > 0`, read with one LSI Query.
    """

    Meta = table_meta("unread_counts")

    user_id = UnicodeAttribute(hash_key=True)
    source = UnicodeAttribute(range_key=True)
    count = NumberAttribute(default=0)

    by_count = UnreadCountIndex()
