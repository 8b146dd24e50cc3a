"""The comments table's global secondary indexes (declarations; the table is `social.models.Comment`)."""

from pynamodb.attributes import UnicodeAttribute
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex, IncludeProjection, KeysOnlyProjection


class TimelineIndex(GlobalSecondaryIndex):
    """Visible comments by write-sharded day (`20261122#7`), newest last."""

    class Meta:
        index_name = "timeline"
        projection = AllProjection()

    timeline_key = UnicodeAttribute(hash_key=True)
    sort_key = UnicodeAttribute(range_key=True)


class RepliesIndex(GlobalSecondaryIndex):
    """Visible replies of a comment, oldest first."""

    class Meta:
        index_name = "replies"
        projection = AllProjection()

    reply_to = UnicodeAttribute(hash_key=True)
    sort_key = UnicodeAttribute(range_key=True)


class AuthorIndex(GlobalSecondaryIndex):
    """Every comment of an author, hidden ones included (moderation)."""

    class Meta:
        index_name = "author"
        projection = KeysOnlyProjection()

    author_id = UnicodeAttribute(hash_key=True)
    sort_key = UnicodeAttribute(range_key=True)


class ProfileIndex(GlobalSecondaryIndex):
    """An author's visible comments and replies, newest last: a profile page is one Query.

    Sparse: `profile_author` is present only while the comment is neither hidden nor deleted
    (set and removed with `timeline_key` / `reply_to`), so an author's tombstones and hidden
    comments cost a profile nothing. Carries what a profile shows, so no item is read; not
    `has_replies`, `like_shards` or `mentioned_ids`, so writing those does not write it.
    """

    class Meta:
        index_name = "profile"
        projection = IncludeProjection(["author_id", "body", "parent_id", "created_at", "edited_at"])

    profile_author = UnicodeAttribute(hash_key=True)
    sort_key = UnicodeAttribute(range_key=True)
