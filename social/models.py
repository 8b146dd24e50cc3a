"""Tables of the `social` room (docs/reference/tables.md "Tables") and the Django user.

The user is the only relational model here; everything with volume lives in
DynamoDB as the PynamoDB declarations below. User ids stored in DynamoDB are the
Django user's pk as a string.
"""

from django.contrib.auth.models import AbstractUser
from django.db import models
from django.db.models.functions import Lower
from pynamodb.attributes import (
    BooleanAttribute,
    NumberAttribute,
    TTLAttribute,
    UnicodeAttribute,
    UnicodeSetAttribute,
)
from pynamodb.indexes import GlobalSecondaryIndex, IncludeProjection, KeysOnlyProjection
from pynamodb.models import Model

from project.dynamo.clients import table_meta
from social.comment_indexes import AuthorIndex, ProfileIndex, RepliesIndex, TimelineIndex


class User(AbstractUser):
    display_name = models.CharField(max_length=50, blank=True)
    # The address in `email` was proven by a link sent to it (notifications/mail/verification.py);
    # notification e-mail goes only to verified addresses. Changing the address clears it.
    email_verified = models.BooleanField(default=False)
    # The person's language and time zone (social/account/language.py): empty = what their
    # browser says (Accept-Language, the `tz` cookie), else the site's. Mails, digests and
    # quiet hours read them with the address, in the same row.
    locale = models.CharField(max_length=8, blank=True, default="")
    time_zone = models.CharField(max_length=64, blank=True, default="")
    # Hours (0-23, local) between which no e-mail goes (start == end: none); what falls in
    # them is mailed as one message when they end (notifications/mail/quiet.py).
    quiet_start = models.PositiveSmallIntegerField(null=True, blank=True)
    quiet_end = models.PositiveSmallIntegerField(null=True, blank=True)
    # The local hour the digest leaves at; None: NOTIFY_DIGEST_HOUR.
    digest_hour = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta(AbstractUser.Meta):
        # "Alice" and "alice" are one name: the database refuses the second, so two
        # sign-ups racing for it can't both win (the loser gets a 400, social.services).
        constraints = [
            models.UniqueConstraint(
                Lower("username"),
                name="social_user_username_ci_unique",
                violation_error_message="This username is taken.",
            )
        ]

    @property
    def shown_name(self) -> str:
        return self.display_name or self.username


class ErasedUsername(models.Model):
    """The name of an erased account, lower case: never given again, so the @mentions in old
    comments never come to name a newcomer (social.services.username_check)."""

    name = models.CharField(max_length=150, primary_key=True)

    def __str__(self) -> str:
        return self.name


class Comment(Model):
    Meta = table_meta("comments")

    comment_id = UnicodeAttribute(hash_key=True)
    author_id = UnicodeAttribute()
    body = UnicodeAttribute()
    parent_id = UnicodeAttribute(null=True)
    created_at = UnicodeAttribute()  # ISO 8601 UTC with microseconds: sorts as text
    sort_key = UnicodeAttribute()  # created_at#comment_id: unique, so cursors never skip a tie
    hidden = BooleanAttribute(default=False)
    edited_at = UnicodeAttribute(null=True)  # when its author last changed the body
    # When its author deleted it: the body is emptied in the same write, and the item stays
    # as a tombstone so that replies hanging under it keep their thread.
    deleted_at = UnicodeAttribute(null=True)
    # Present only while the comment is visible, so hiding it takes it out of the
    # timeline and replies indexes (sparse GSIs) instead of filtering pages.
    timeline_key = UnicodeAttribute(null=True)
    reply_to = UnicodeAttribute(null=True)
    # The author's id while the comment is visible and not deleted (the sparse `profile` index);
    # comments from before the index got it from `python manage.py profile_index_backfill`.
    profile_author = UnicodeAttribute(null=True)
    # How many shards likes of this comment spread over, when its like counter was grown or
    # set (social.counters); absent: LIKE_COUNTER_SHARDS. A like reads the comment anyway,
    # so it learns the count with no read of its own.
    like_shards = NumberAttribute(null=True)
    # Set right after its first reply commits: a delete keeps a comment with replies listed,
    # and the replies index (a GSI, updated asynchronously on AWS) may not list a reply less
    # than a second old, while this item is read consistently.
    has_replies = BooleanAttribute(null=True)
    # Set right after its first reaction commits: list pages read the reaction counts of such comments only.
    has_reactions = BooleanAttribute(null=True)
    # A reply's conversation: the id of the top-level comment it hangs under, copied from its
    # parent when it is posted (`social.selectors.comment_thread_id`), so a reply's mutes and
    # watchers are found without walking up the chain. Absent on a top-level comment (its own
    # id is its thread: nothing to store in it or in the timeline index that projects it).
    thread_id = UnicodeAttribute(null=True)
    # The people this comment's @mentions already notified: an edit notifies only the others
    # (actions.comments). Absent until a mention notifies someone (a set can't be empty).
    mentioned_ids = UnicodeSetAttribute(null=True)
    # Who hid it while `hidden`: "reports" (REPORT_HIDE_THRESHOLD reporters, until staff decide)
    # or "staff"; absent on hides from before reports existed (staff).
    hidden_by = UnicodeAttribute(null=True)
    # The number of the body it holds: 1 (absent) as posted, one more per edit; each earlier
    # body is a `CommentVersion` item (social.edit_history), for staff only.
    version = NumberAttribute(null=True)

    timeline_index = TimelineIndex()
    replies_index = RepliesIndex()
    author_index = AuthorIndex()
    profile_index = ProfileIndex()


class CommentVersion(Model):
    """An earlier body of an edited comment, kept for staff (social.edit_history): one item per
    version, written by the edit that replaced it, erased with the comment's text."""

    Meta = table_meta("comment_versions")

    comment_id = UnicodeAttribute(hash_key=True)
    version = NumberAttribute(range_key=True)  # 1: as posted
    body = UnicodeAttribute()
    written_at = UnicodeAttribute()  # when this body was posted or edited in
    replaced_at = UnicodeAttribute()  # when the next version replaced it


class TimelineDay(Model):
    """The days that have comments, and how many write shards each day was split into.

    The timeline walks these newest first instead of probing empty days.
    """

    Meta = table_meta("timeline_days")

    bucket = UnicodeAttribute(hash_key=True)
    day = UnicodeAttribute(range_key=True)  # 20261122
    shards = NumberAttribute()


class LikesByUserIndex(GlobalSecondaryIndex):
    """A person's likes, by comment id: what their export lists and their deletion undoes.

    Keys only (both are the table's keys already): one index write per like or unlike.
    """

    class Meta:
        index_name = "by_user"
        projection = KeysOnlyProjection()

    user_id = UnicodeAttribute(hash_key=True)
    comment_id = UnicodeAttribute(range_key=True)


class Like(Model):
    """One item per like: the key makes "one like per user per comment" a constraint."""

    Meta = table_meta("likes")

    comment_id = UnicodeAttribute(hash_key=True)
    user_id = UnicodeAttribute(range_key=True)

    by_user = LikesByUserIndex()


class ReactionsByUserIndex(GlobalSecondaryIndex):
    """A person's reactions, by comment id: what their export lists and their deletion undoes."""

    class Meta:
        index_name = "by_user"
        projection = KeysOnlyProjection()

    user_id = UnicodeAttribute(hash_key=True)
    comment_id = UnicodeAttribute(range_key=True)


class Reaction(Model):
    """One item per person, reaction and comment: the key makes "one of each reaction per person" a constraint."""

    Meta = table_meta("reactions")

    comment_id = UnicodeAttribute(hash_key=True)
    reactor_key = UnicodeAttribute(range_key=True)  # <user id>#<reaction name> (social/reactions/names.py)
    user_id = UnicodeAttribute()

    by_user = ReactionsByUserIndex()


class CounterShard(Model):
    """One shard of a counter; the counter's value is the sum of its shards."""

    Meta = table_meta("counters")

    counter_key = UnicodeAttribute(hash_key=True)  # like#<comment_id>, view#<comment_id>, reaction#<comment_id>
    shard = NumberAttribute(range_key=True)
    count = NumberAttribute(default=0)  # type: ignore[assignment]  # shadows the unused Model.count()


# --- counter totals and ranking ----------------------------------------------


class CounterDueIndex(GlobalSecondaryIndex):
    """Counters with a pending aggregation, by write-sharded partition (`3`), soonest first.

    Sparse: only items with a due flag are in it, so the aggregator finds work with a
    Query per partition (never a Scan), and a burst of changes on one counter is one entry.
    """

    class Meta:
        index_name = "due"
        projection = KeysOnlyProjection()

    due_part = UnicodeAttribute(hash_key=True)
    due_at = NumberAttribute(range_key=True)


class CounterRankingIndex(GlobalSecondaryIndex):
    """Aggregated totals by kind and ranking shard (`like#4`), highest first.

    The partition carries a write-shard suffix, so no single partition takes every
    aggregation; the top N is read by querying each shard and merging. Counters with
    a total of 0 are left out (sparse).

    It carries only what the ranking shows (the total, when it was aggregated, the
    object), so raising, claiming and clearing the due flag, which change other
    attributes of the item, do not write the index: a GSI pays a write whenever an
    attribute it projects changes (with every attribute projected, each like's flag
    and each aggregation's claim cost one unit more). Named for its shape: an index's
    projection cannot be changed in place, so a new shape is a new index
    (`create_tables` adds it; `create_tables --drop-undeclared` removes the old one).
    """

    class Meta:
        index_name = "ranking_by_total"
        projection = IncludeProjection(["object_id", "total", "aggregated_at"])

    rank_part = UnicodeAttribute(hash_key=True)
    rank_sort = UnicodeAttribute(range_key=True)  # zero-padded total # object id: ties sort by id


class CounterTotal(Model):
    """The aggregated, queryable total of one counter, its due flag and its shard override."""

    Meta = table_meta("counter_totals")

    counter_key = UnicodeAttribute(hash_key=True)  # like#<comment_id>, view#<comment_id>
    kind = UnicodeAttribute(null=True)
    object_id = UnicodeAttribute(null=True)
    total = NumberAttribute(null=True)
    aggregated_at = NumberAttribute(null=True)  # epoch seconds
    # Per-counter shard count (staff raise it for a hot counter); absent: the kind's setting.
    shards = NumberAttribute(null=True)
    # The due flag: `changed_at` is when the first unaggregated change landed; `due_at`
    # when the aggregator should run (or, while claimed, when the claim expires).
    changed_at = NumberAttribute(null=True)
    due_part = UnicodeAttribute(null=True)
    due_at = NumberAttribute(null=True)
    claim = UnicodeAttribute(null=True)
    # Set when a view writer counts on this flag instead of writing it: the aggregator then
    # waits for the flag to settle before it reads the shards (likes need no wait).
    relied_on = BooleanAttribute(null=True)
    rank_part = UnicodeAttribute(null=True)
    rank_sort = UnicodeAttribute(null=True)

    due_index = CounterDueIndex()
    ranking_index = CounterRankingIndex()


class Relation(Model):
    """One person's block or mute of another (social/relations/): one item per pair.

    A block and a mute are two attributes of the one item, so undoing one leaves the other;
    the item is deleted when neither is left. The owner's whole list is one Query of their
    partition (at most RELATIONS_MAX items), read by the timeline, the inbox and the like fold;
    "has X blocked me" is one GetItem of (X, me).
    """

    Meta = table_meta("blocks")  # blocks and mutes: a short name, as IAM policies name every table

    user_id = UnicodeAttribute(hash_key=True)  # who blocks or mutes
    other_id = UnicodeAttribute(range_key=True)  # whom
    blocked_at = NumberAttribute(null=True)  # epoch seconds; absent: not blocked
    muted_at = NumberAttribute(null=True)  # epoch seconds; absent: not muted


# --- reports and the moderation queue (social/moderation/) ---------------------


class ReportsByReporterIndex(GlobalSecondaryIndex):
    """A person's own reports (their export, and their account's deletion): no Scan of `reports`.
    Carries what the export shows, so it needs no read of the items."""

    class Meta:
        index_name = "by_reporter"
        projection = IncludeProjection(["reason", "note", "created_at"])

    reporter_id = UnicodeAttribute(hash_key=True)
    comment_id = UnicodeAttribute(range_key=True)


class Report(Model):
    """One item per report: PK comment, SK reporter, so "one report per person per comment" is
    the key (a second report fails its put's condition and changes nothing)."""

    Meta = table_meta("reports")

    comment_id = UnicodeAttribute(hash_key=True)
    reporter_id = UnicodeAttribute(range_key=True)
    reason = UnicodeAttribute()  # one of social.moderation.reasons.REASONS
    note = UnicodeAttribute(null=True)  # the reporter's own words, optional
    weight = NumberAttribute()  # in hundredths: 100 from a reporter with standing, else 0 (standing.py)
    created_at = UnicodeAttribute()
    version = NumberAttribute(null=True)  # the comment's version when reported (absent: 1)

    by_reporter = ReportsByReporterIndex()


class ReportQueueNewestIndex(GlobalSecondaryIndex):
    """Open cases, newest report last (read backwards); sparse: only open cases carry `queue`."""

    class Meta:
        index_name = "open_newest"
        projection = KeysOnlyProjection()

    queue = UnicodeAttribute(hash_key=True)
    newest_key = UnicodeAttribute(range_key=True)  # <last reported at>#<comment id>


class ReportQueueMostIndex(GlobalSecondaryIndex):
    """Open cases by how many people reported them since the last decision (a number ADDed by
    each report, so no report reads the case first; equal counts in no particular order)."""

    class Meta:
        index_name = "open_most"
        projection = KeysOnlyProjection()

    queue = UnicodeAttribute(hash_key=True)
    open_reporters = NumberAttribute(range_key=True)


class ReportCase(Model):
    """A reported comment's case: exact counts, the queue's sort keys, the staff's last decision.

    Written in each report's transaction with ADDs (concurrent reporters never lose a count,
    and no report reads it first) on a condition that tells whether this report crosses the
    threshold (then the same transaction hides the comment, once: `hidden_by_reports_at`), and
    by staff decisions (which close it: out of the sparse queue indexes).
    """

    Meta = table_meta("report_cases")

    comment_id = UnicodeAttribute(hash_key=True)
    author_id = UnicodeAttribute()
    reporters = NumberAttribute(default=0)  # distinct reporters, ever
    # Since the last staff decision; the `open_most` index's sort key (ADDed by each report).
    open_reporters = NumberAttribute(default=0)
    score = NumberAttribute(default=0)  # weighted, hundredths, since the last staff decision
    # Reports per reason, ever (social.moderation.reasons.REASONS): ADDed, so never a lost count.
    reason_spam = NumberAttribute(null=True)
    reason_harassment = NumberAttribute(null=True)
    reason_hate = NumberAttribute(null=True)
    reason_violence = NumberAttribute(null=True)
    reason_sexual = NumberAttribute(null=True)
    reason_misinformation = NumberAttribute(null=True)
    reason_other = NumberAttribute(null=True)
    first_reported_at = UnicodeAttribute(null=True)
    last_reported_at = UnicodeAttribute(null=True)
    status = UnicodeAttribute(default="open")  # open | closed
    hidden_by_reports_at = UnicodeAttribute(null=True)  # when the threshold hid it (once)
    staff_kept = BooleanAttribute(null=True)  # staff chose to keep it visible: reports never hide it again
    decision = UnicodeAttribute(null=True)  # the last staff action on it
    decided_by = UnicodeAttribute(null=True)  # staff username
    decided_at = UnicodeAttribute(null=True)
    queue = UnicodeAttribute(null=True)  # "open" while open (the queue indexes are sparse)
    newest_key = UnicodeAttribute(null=True)

    newest_index = ReportQueueNewestIndex()
    most_index = ReportQueueMostIndex()


class ModerationAction(models.Model):
    """The staff audit log: one line per staff action (hide, unhide, resolve, suspend, delete),
    and per hide the reports caused. Written before the action as `pending` and marked `done`
    or `failed` after it, so a process that dies in between leaves a line that says so."""

    ACTIONS = [
        ("hide", "hide"),
        ("unhide", "unhide"),
        ("resolve", "resolve"),
        ("delete", "delete"),
        ("suspend", "suspend"),
        ("unsuspend", "unsuspend"),
        # The spam defence: staff's decisions on held comments, and the screen's own decisions.
        ("approve", "approve"),
        ("reject", "reject"),
        ("spam", "delete as spam"),
        ("hold", "hold"),
        ("block", "block"),
        ("flag", "flag"),
        ("censor", "censor"),
    ]
    TARGETS = [("comment", "comment"), ("user", "user")]
    OUTCOMES = [("pending", "pending"), ("done", "done"), ("failed", "failed")]

    at = models.DateTimeField(auto_now_add=True, db_index=True)
    # Null for the threshold's own hides ("by reports") and once the staff account is deleted;
    # `staff_username` keeps the name.
    staff = models.ForeignKey(User, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    staff_username = models.CharField(max_length=150, blank=True)
    action = models.CharField(max_length=16, choices=ACTIONS, db_index=True)
    target_type = models.CharField(max_length=16, choices=TARGETS)
    target_id = models.CharField(max_length=64, db_index=True)
    detail = models.TextField(blank=True)
    source = models.CharField(max_length=16, default="admin")  # admin | api | reports
    outcome = models.CharField(max_length=16, choices=OUTCOMES, default="pending")

    class Meta:
        ordering = ["-at", "-id"]

    def __str__(self) -> str:
        who = self.staff_username or "reports"
        return f"{who} {self.action} {self.target_type} {self.target_id}"


class AccountDeletion(models.Model):
    """A person asked for their account to be deleted (social/accounts/): the request and the
    eraser's progress. Created in the database transaction that deactivates the account; the
    worker (`erase_accounts`) claims it with a lease, runs the eraser steps (project/identity/erasure.py)
    and stores the step and cursor it reached after each unit, so a restart resumes there.
    Kept once done, without the person's name: staff's record that an account was erased."""

    user_id = models.BigIntegerField(unique=True)  # no foreign key: the user row goes at the end
    requested_at = models.DateTimeField(db_index=True)
    step = models.CharField(max_length=64, blank=True)  # the step being run; empty: not started
    cursor = models.TextField(blank=True)  # where that step resumes
    lease_owner = models.CharField(max_length=64, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveIntegerField(default=0)
    finished_at = models.DateTimeField(null=True, blank=True, db_index=True)

    class Meta:
        ordering = ["requested_at", "id"]

    def __str__(self) -> str:
        return f"deletion of user {self.user_id} ({'done' if self.finished_at else self.step or 'waiting'})"


# --- live updates -------------------------------------------------------------


class LiveChange(Model):
    """One signal of the live change log (social/live.py): ids whose state just changed.

    `ids` holds `u:<user_id>` (that person's badge moved) and `c:<comment_id>` (that comment's
    like count, or someone's heart on it, moved), at most LIVE_SIGNAL_IDS_MAX. Writers put a
    new item after their change committed, never update one: no hot item, no conflicts, and a
    put repeated only repeats a signal. The range key is `<13-digit epoch ms>#<8 hex>`, so two
    puts never collide; web processes Query each part for the last few seconds.
    """

    Meta = table_meta("live_changes")

    part = UnicodeAttribute(hash_key=True)  # "0" .. LIVE_CHANGE_PARTS - 1, chosen at random per put
    at = UnicodeAttribute(range_key=True)
    ids = UnicodeSetAttribute()
    expires_at = TTLAttribute()


# The activity log's daily rollup (relational); its DynamoDB tables are per month.
from social.activity.models import ActivityDaily, ActivityDay  # noqa: E402, F401

# The spam defence's relational tables: watched words and the held-for-review queue.
from social.spam.models import HeldComment, TrustRecord, WatchedWord  # noqa: E402, F401
