"""Reads of the social room. No Scan on any of these: every read is a key lookup,
a Query, or a BatchGetItem."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.contrib.auth import get_user_model
from django.utils.translation import gettext
from pynamodb.exceptions import DoesNotExist

from project.clock import clock, parse_iso
from project.dynamo.cursors import ISO_AT, UUID, cursor_encode, cursor_fields
from project.dynamo.shared_reads import SharedReads
from project.errors import NotFound
from project.serving.pools import READS, pool
from social.counters import LIKES, counter_key, counter_value, counter_values
from social.live import page_counts_kept, shared_counts
from social.mentions import mention_usernames
from social.models import AccountDeletion, Comment, Like, TimelineDay
from social.reactions.selectors import NONE, Reactions, reactions_of
from social.relations.selectors import blocked_ids, silenced_ids

TIMELINE_BUCKET = "comments"  # the timeline_days partition listing days with comments
PAGE_SIZE = 20
PAGE_SIZE_MAX = 100


@dataclass(frozen=True)
class Author:
    id: str
    username: str
    display_name: str


@dataclass(frozen=True)
class CommentView:
    id: str
    author: Author
    body: str
    parent_id: str | None
    created_at: datetime
    like_count: int
    liked: bool
    hidden: bool = False
    held: bool = False  # hidden because it waits for review (social.spam): shown to its author as such
    edited_at: datetime | None = None
    deleted: bool = False  # its author deleted it: a tombstone, body ""
    # Lower-case name -> username of the people its body @mentions (pages link them; social.mentions).
    mention_usernames: Mapping[str, str] = field(default_factory=dict)
    reactions: Reactions = NONE  # counts by name and the viewer's own (social/reactions/)


@dataclass(frozen=True)
class CommentPage:
    results: list[CommentView]
    next_cursor: str | None


DELETED_USERNAME = "[deleted]"  # an Author whose account is gone: no profile to link to
DELETED_NAME = "deleted account"


def authors_by_id(user_ids: list[str]) -> dict[str, Author]:
    """Authors for DynamoDB user ids; an account whose deletion was asked for is a "deleted account"
    (no profile) from that moment, not once the eraser has run (one SQL query excludes it)."""
    numeric = [int(uid) for uid in set(user_ids) if uid.isdigit()]
    leaving = AccountDeletion.objects.filter(user_id__in=numeric).values("user_id")
    users = get_user_model().objects.filter(pk__in=numeric).exclude(pk__in=leaving).only("username", "display_name")
    found = {str(user.pk): Author(str(user.pk), user.username, user.shown_name) for user in users}
    return {uid: found.get(uid, Author(uid, DELETED_USERNAME, DELETED_NAME)) for uid in user_ids}


def _liked_ids(
    comment_ids: list[str], viewer_id: str | None, *, consistent: bool = True, counts: Mapping[str, int] | None = None
) -> set[str]:
    """Which of these comments the viewer likes: one BatchGetItem of their like rows.

    `counts` (comment id to like count): a comment counted 0 has no like to find, so its
    row is not read. On AWS a key that finds nothing costs as much as one that does (1
    unit consistent, 0.5 eventually), so a page of comments nobody liked reads nothing.
    """
    if not viewer_id or not comment_ids:
        return set()
    wanted = [cid for cid in dict.fromkeys(comment_ids) if counts is None or counts.get(cid, 1) > 0]
    if not wanted:
        return set()
    keys = [(comment_id, viewer_id) for comment_id in wanted]
    return {like.comment_id for like in Like.batch_get(keys, consistent_read=consistent)}


def comment_views(
    comments: list[Comment], *, viewer_id: str | None, fresh: Collection[str] | None = None
) -> list[CommentView]:
    """Comments with author, like count and the viewer's own like state.

    `fresh=None`: every count exact (strongly consistent). A list page passes the comments
    whose count must be exact (`fresh`, those the viewer just liked or unliked) and reads
    the others eventually consistently, half the read units: a count may then be up to
    about a second old, plus the SHARED_READ_SECONDS this process shares it for
    (project/dynamo/shared_reads.py), which a list of other people's comments can show. With
    shared reads on, a count this process read for a page or a live poll within half of
    LIVE_FULL_EVERY is shown again, unread, as long as the live change log has no signal for
    it since (social/live.py `page_counts_kept`): a like reaches such a count when its fold
    signals it, as it reaches the live poll's answers. The viewer's own
    like states are read the same way: strongly consistently for `fresh` comments, so a
    person sees their own like or unlike at once on every page this browser reaches, and
    eventually consistently for the others (a like made on another device less than about a
    second ago may show a moment later). Only comments whose count is above 0 have a like
    to find; the others' rows are not read.
    """
    if not comments:
        return []
    ids = [comment.comment_id for comment in comments]
    counted = _list_counts(ids, fresh=fresh)
    exact_ids = set(ids if fresh is None else fresh)
    liked = _liked_ids([cid for cid in ids if cid in exact_ids], viewer_id, counts=counted) | _liked_ids(
        [cid for cid in ids if cid not in exact_ids], viewer_id, consistent=False, counts=counted
    )
    reactions = reactions_of(comments, viewer_id=viewer_id, fresh=fresh)
    authors = authors_by_id([comment.author_id for comment in comments])
    mentions = mention_usernames(comment.body for comment in comments if not comment.deleted_at)
    return [
        CommentView(
            id=comment.comment_id,
            author=authors[comment.author_id],
            body=comment.body,
            parent_id=comment.parent_id,
            created_at=parse_iso(comment.created_at),
            like_count=counted[comment.comment_id],
            liked=comment.comment_id in liked,
            hidden=bool(comment.hidden),
            held=bool(comment.hidden) and comment.hidden_by == "held",
            edited_at=parse_iso(comment.edited_at) if comment.edited_at else None,
            deleted=bool(comment.deleted_at),
            mention_usernames=mentions,
            reactions=reactions[comment.comment_id],
        )
        for comment in comments
    ]


def _list_counts(ids: list[str], *, fresh: Collection[str] | None) -> dict[str, int]:
    """Like counts for `comment_views`: all exact (`fresh=None`), else exact for the `fresh`
    ones, kept for the others when the live change log vouches for them, read for the rest
    (and then kept for the next page or poll of this process)."""
    shared = fresh is not None and settings.SHARED_READ_SECONDS > 0
    now = clock.now_ms()
    kept = page_counts_kept([cid for cid in ids if cid not in (fresh or ())], now_ms=now) if shared else {}
    wanted = [cid for cid in ids if cid not in kept]
    keys = {cid: counter_key(kind=LIKES, object_id=cid) for cid in wanted}
    exact = None if fresh is None else {keys[cid] for cid in fresh if cid in keys}
    values = counter_values(keys=list(keys.values()), consistent=exact is None, exact=exact)
    read = {cid: values[key] for cid, key in keys.items()}
    if shared:
        shared_counts.put(read, read_ms=now, strong=[cid for cid in wanted if cid in (fresh or ())])
    return {cid: kept[cid] if cid in kept else read[cid] for cid in ids}


def comment_find(*, comment_id: str) -> Comment | None:
    """The comment item (hidden or not), read consistently; None for unknown or malformed ids."""
    try:
        uuid.UUID(comment_id)
        return Comment.get(comment_id, consistent_read=True)
    except (ValueError, TypeError, AttributeError, DoesNotExist):
        return None


def comment_thread_id(comment: Comment) -> str:
    """The id of the conversation `comment` belongs to: the top-level comment it hangs under.

    A top-level comment is its own thread; a reply posted since threads existed stores its
    root's id (`thread_id`, copied from its parent with this function when it is posted). A
    reply from before has none, and its parent stands in for the root. That is exact for a
    direct reply to a top-level comment; for an older reply to a reply it names an inner
    comment, and the replies posted under it since inherit that id, so one old sub-thread
    is muted and watched on its own, consistently, rather than by walking up the chain (a
    consistent read per level on every reply). Nobody watched or muted anything before
    threads existed, so no state is lost.
    """
    return comment.thread_id or comment.parent_id or comment.comment_id


def comment_get(
    *, comment_id: str, viewer_id: str | None, include_hidden: bool = False, fresh: Collection[str] | None = None
) -> CommentView:
    """One comment (read consistently) with its like count and the viewer's like: exact unless
    a page passes `fresh` (see `comment_views`), as the comment's own page does."""
    comment = comment_find(comment_id=comment_id)
    if comment is None or (comment.hidden and not include_hidden):
        raise NotFound(gettext("No such comment."))
    return comment_views([comment], viewer_id=viewer_id, fresh=fresh)[0]


def like_counts(*, comment_ids: list[str], fresh: Collection[str] = ()) -> dict[str, int]:
    """The like counts of these comments for a page that follows them (one eventually
    consistent Query per comment: half the units of an exact read, at most a second late),
    exact for the `fresh` ones (those the viewer just liked or unliked)."""
    keys = {comment_id: counter_key(kind=LIKES, object_id=comment_id) for comment_id in comment_ids}
    exact = {keys[comment_id] for comment_id in fresh if comment_id in keys}
    values = counter_values(keys=list(keys.values()), consistent=False, exact=exact)
    return {comment_id: values[key] for comment_id, key in keys.items()}


def liked_by(
    *, comment_ids: list[str], user_id: str, counts: Mapping[str, int] | None = None, fresh: Collection[str] = ()
) -> dict[str, bool]:
    """Which of these comments the user likes, for a page that follows them (one eventually
    consistent BatchGetItem: 0.5 RCU a comment, at most a second late; strongly consistent
    for the `fresh` ones, those the user just liked or unliked). `counts`: their like counts,
    read just before; comments counted 0 are not read (see `_liked_ids`)."""
    exact = [comment_id for comment_id in comment_ids if comment_id in fresh]
    others = [comment_id for comment_id in comment_ids if comment_id not in fresh]
    liked = _liked_ids(exact, user_id, counts=counts) | _liked_ids(others, user_id, consistent=False, counts=counts)
    return {comment_id: comment_id in liked for comment_id in comment_ids}


def like_state(*, comment_id: str, user_id: str) -> tuple[int, bool]:
    liked = bool(_liked_ids([comment_id], user_id))
    return counter_value(key=counter_key(kind=LIKES, object_id=comment_id)), liked


# --- cursors --------------------------------------------------------------


COMMENT_SORT_KEY = f"{ISO_AT}#{UUID}"  # created_at#comment_id
TIMELINE_CURSOR = {"day": r"\d{8}", "before": COMMENT_SORT_KEY}
REPLIES_CURSOR = {"after": COMMENT_SORT_KEY}
AUTHOR_CURSOR = {"before": COMMENT_SORT_KEY}


def clamp_limit(limit: int | None) -> int:
    if limit is None:
        return PAGE_SIZE
    return max(1, min(PAGE_SIZE_MAX, limit))


# --- the viewer's own writes ------------------------------------------------


def _written_get(comment_ids: Collection[str]) -> list[Comment]:
    """The comments the viewer just posted, edited or deleted, as the table holds them now
    (one strongly consistent BatchGetItem of at most FRESH_COMMENTS.most keys)."""
    if not comment_ids:
        return []
    return list(Comment.batch_get(list(dict.fromkeys(comment_ids)), consistent_read=True))


def _with_written(
    found: list[Comment], own: list[Comment], *, listed: Callable[[Comment], bool], newest_first: bool
) -> list[Comment]:
    """A list read from an index, with the viewer's own just-written comments as they are now.

    A GSI is updated asynchronously (on AWS usually well under a second after the write): a
    comment posted a moment ago may not be listed yet, an edited one listed with its old
    body, a deleted one still listed. The viewer's own are replaced by the table's copy, added
    where they sort when `listed` (this list, this page's range) says they belong, and left
    out when not; everyone else's changes show once the index has them.
    """
    if not own:
        return found
    mine = {comment.comment_id for comment in own}
    merged = [comment for comment in found if comment.comment_id not in mine]
    merged += [comment for comment in own if listed(comment)]
    return sorted(merged, key=lambda comment: comment.sort_key, reverse=newest_first)


# --- timeline -------------------------------------------------------------


def _day_shard_newest(*, day: str, shard: int, before: str | None, limit: int) -> list[Comment]:
    """Up to `limit` visible comments of one write shard of `day`, newest first, older than `before`."""
    condition = Comment.sort_key < before if before else None
    return list(
        Comment.timeline_index.query(
            f"{day}#{shard}", range_key_condition=condition, scan_index_forward=False, limit=limit
        )
    )


def _timeline_comments(*, day: str, shards: int, before: str | None, limit: int) -> list[Comment]:
    """The newest `limit` visible comments of one day, merged across its write shards.

    Each shard is asked for a share of the page, not the whole page: on AWS a Query costs
    the size of what it returns, so 10 shards asked for 21 comments each would read ten
    pages to show one. A shard that filled its share while its oldest comment is still newer
    than the page's last one may hold more of the page: only those shards are asked again,
    for twice as many, until none can. The shards are read concurrently.
    """
    share = max(2, -(-limit // shards) + 1)
    found: dict[int, list[Comment]] = {}
    open_shards: dict[int, str | None] = dict.fromkeys(range(shards), before)  # shard -> read older than this
    while open_shards:
        asked = list(open_shards.items())
        pages = list(
            pool(READS).map(
                lambda ask, share=share: _day_shard_newest(day=day, shard=ask[0], before=ask[1], limit=share), asked
            )
        )
        open_shards = {}
        for (shard, _), page in zip(asked, pages, strict=True):
            found.setdefault(shard, []).extend(page)
            if len(page) == share:  # full: the shard may hold more
                open_shards[shard] = page[-1].sort_key
        merged = _newest_first(found)
        if len(merged) >= limit:
            last_shown = merged[limit - 1].sort_key
            open_shards = {shard: after for shard, after in open_shards.items() if after and after > last_shown}
        share *= 2
    return _newest_first(found)[:limit]


# The timeline is the same for everyone but what each viewer left out or wrote: its days
# and each day's newest comments are shared by the process's requests for a moment
# (project/dynamo/shared_reads.py). Never changed once read: requests only read these lists.
_shared_days: SharedReads[list[TimelineDay]] = SharedReads(maxsize=64)
_shared_comments: SharedReads[list[Comment]] = SharedReads(maxsize=1024)


def _timeline_days(*, through: str | None) -> list[TimelineDay]:
    """The days that have comments, newest first, from `through` on (every day if None)."""
    condition = TimelineDay.day <= through if through else None

    def read() -> list[TimelineDay]:
        return list(TimelineDay.query(TIMELINE_BUCKET, range_key_condition=condition, scan_index_forward=False))

    return _shared_days.get(through, read)


# A page reads a day's newest `PAGE_SIZE + 1` plus the viewer's own just-written comments
# (`comment_timeline`): read in steps of this many, viewers with and without such comments
# share one read (its first `limit` are the same comments as a read of `limit`).
_SHARED_LIMIT_STEP = 16


def _day_newest(*, day: str, shards: int, before: str | None, limit: int) -> list[Comment]:
    shared_limit = -(-limit // _SHARED_LIMIT_STEP) * _SHARED_LIMIT_STEP
    key = (day, shards, before, shared_limit)
    read = _shared_comments.get(
        key, lambda: _timeline_comments(day=day, shards=shards, before=before, limit=shared_limit)
    )
    return read[:limit]


def _newest_first(pages: dict[int, list[Comment]]) -> list[Comment]:
    return sorted((comment for page in pages.values() for comment in page), key=lambda c: c.sort_key, reverse=True)


def comment_timeline(
    *,
    viewer_id: str | None,
    cursor: str | None = None,
    limit: int | None = None,
    fresh: Collection[str] = (),
    written: Collection[str] = (),
) -> CommentPage:
    """Newest first across every day, `limit` per page, cursor-paginated; counts exact only
    for the `fresh` comments (see `comment_views`), and the `written` ones (those the viewer
    just posted, edited or deleted) read from the table, not the index (see `_with_written`).

    Each day's comments are spread over write shards (`<day>#<n>`) so no partition
    takes every new comment; a page queries the shards of as many days as it needs,
    walking the `timeline_days` list instead of probing empty days.
    """
    limit = clamp_limit(limit)
    position = cursor_fields(cursor, query="timeline", fields=TIMELINE_CURSOR) if cursor else None
    own = _written_get(written)
    wanted = limit + 1 + len(own)  # an own comment the index lists but the table no longer does
    found: list[Comment] = []
    # People the viewer blocked or muted are left out (one Query of their small list per page).
    silenced = silenced_ids(user_id=viewer_id) if viewer_id else frozenset()
    for day in _timeline_days(through=position["day"] if position else None):
        before = position["before"] if position and day.day == position["day"] else None
        while True:  # a day read again past what was left out, so that no comment of it is skipped
            need = wanted - len(found)
            day_comments = _day_newest(day=day.day, shards=int(day.shards), before=before, limit=need)
            found.extend(comment for comment in day_comments if comment.author_id not in silenced)
            if len(day_comments) < need or len(found) >= wanted:
                break
            before = day_comments[-1].sort_key
        if len(found) >= wanted:
            break
    bound = position["before"] if position else None
    found = _with_written(
        found,
        own,
        listed=lambda comment: bool(comment.timeline_key) and (bound is None or comment.sort_key < bound),
        newest_first=True,
    )
    page, more = found[:limit], len(found) > limit
    next_cursor = None
    if more:
        last = page[-1]
        next_cursor = cursor_encode(
            {"day": last.created_at[:10].replace("-", ""), "before": last.sort_key}, query="timeline"
        )
    return CommentPage(comment_views(page, viewer_id=viewer_id, fresh=fresh), next_cursor)


def comment_replies(
    *,
    comment_id: str,
    viewer_id: str | None,
    cursor: str | None = None,
    limit: int | None = None,
    fresh: Collection[str] = (),
    written: Collection[str] = (),
) -> CommentPage:
    """Visible replies of a visible comment, oldest first, cursor-paginated, leaving out those
    of people the viewer blocked (a page may then be short); counts exact
    only for the `fresh` comments (see `comment_views`), the `written` ones read from the
    table (see `_with_written`)."""
    limit = clamp_limit(limit)
    position = cursor_fields(cursor, query=f"replies:{comment_id}", fields=REPLIES_CURSOR) if cursor else None
    condition = Comment.sort_key > position["after"] if position else None
    own = _written_get(written)
    found = list(Comment.replies_index.query(comment_id, range_key_condition=condition, limit=limit + 1 + len(own)))
    after = position["after"] if position else None
    found = _with_written(
        found,
        own,
        listed=lambda reply: reply.reply_to == comment_id and (after is None or reply.sort_key > after),
        newest_first=False,
    )
    page, more = found[:limit], len(found) > limit
    next_cursor = cursor_encode({"after": page[-1].sort_key}, query=f"replies:{comment_id}") if more else None
    if viewer_id and (blocked := blocked_ids(user_id=viewer_id)):  # after the cut: the cursor moves past them
        page = [reply for reply in page if reply.author_id not in blocked]
    return CommentPage(comment_views(page, viewer_id=viewer_id, fresh=fresh), next_cursor)


def comments_by_author(*, author_id: str, limit: int = 50) -> list[CommentView]:
    """An author's comments, hidden ones included, newest first (moderation)."""
    keys = list(Comment.author_index.query(author_id, scan_index_forward=False, limit=limit))
    comments = list(Comment.batch_get([key.comment_id for key in keys], consistent_read=True))
    comments.sort(key=lambda comment: comment.sort_key, reverse=True)
    return comment_views(comments, viewer_id=None)


# --- profiles (the account behind one: social.profiles.selectors) ---------


def profile_comments(
    *,
    author_id: str,
    viewer_id: str | None,
    cursor: str | None = None,
    limit: int | None = None,
    written: Collection[str] = (),
) -> CommentPage:
    """An author's visible comments and replies, newest first, cursor-paginated.

    One Query of the sparse `profile` index (only visible, undeleted comments are in it,
    carrying what the page shows), `limit` + 1 entries: however many comments the author
    has hidden or deleted, a page reads no more than that and no item. The viewer's own
    `written` comments the index does not list yet, or lists though just deleted, are merged
    (`_with_written`, at most FRESH_COMMENTS.most keys). The cursor is signed for this
    author's list and names the last comment shown.
    """
    limit = clamp_limit(limit)
    query = f"author:{author_id}"
    position = cursor_fields(cursor, query=query, fields=AUTHOR_CURSOR) if cursor else None
    bound = position["before"] if position else None
    own = _written_get(written)
    condition = Comment.sort_key < bound if bound else None
    found = list(
        Comment.profile_index.query(
            author_id,
            range_key_condition=condition,
            scan_index_forward=False,
            limit=limit + 1 + len(own),
            page_size=limit + 1 + len(own),
        )
    )
    floor = found[-1].sort_key if len(found) > limit + len(own) else None  # older ones: a later page
    found = _with_written(
        found,
        own,
        listed=lambda comment: (
            comment.profile_author == author_id
            and (bound is None or comment.sort_key < bound)
            and (floor is None or comment.sort_key >= floor)
        ),
        newest_first=True,
    )
    page, more = found[:limit], len(found) > limit
    next_cursor = cursor_encode({"before": page[-1].sort_key}, query=query) if more else None
    return CommentPage(comment_views(page, viewer_id=viewer_id), next_cursor)
