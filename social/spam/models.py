"""Relational tables of the spam defence, which staff manage in the admin (PostgreSQL, as the
moderation audit log): the watched words and the queue of comments held for review."""

from django.db import models


class WatchedWord(models.Model):
    """A word or phrase staff watch for, and what a comment containing it gets (social.spam.words):
    `block` (refused with a 400 naming it, nothing stored), `hold` (waits for review), `flag`
    (published, and reported by the system) or `censor` (published with it masked)."""

    BLOCK = "block"
    HOLD = "hold"
    FLAG = "flag"
    CENSOR = "censor"
    ACTIONS = [(BLOCK, "block"), (HOLD, "hold for review"), (FLAG, "flag for staff"), (CENSOR, "censor")]

    # As staff typed it; matched by its folded form (`key`: NFKC, case folded, look-alikes mapped).
    word = models.CharField(max_length=100)
    key = models.CharField(max_length=100, unique=True, editable=False)
    action = models.CharField(max_length=8, choices=ACTIONS, default=HOLD)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["word"]

    def __str__(self) -> str:
        return f"{self.word} ({self.action})"

    def save(self, *args, **kwargs):
        from social.spam.words import word_key

        self.key = word_key(self.word)
        super().save(*args, **kwargs)


class HeldComment(models.Model):
    """A comment waiting for review: stored in DynamoDB hidden (`hidden_by` "held"), listed here
    for staff until approved (published then) or rejected (deleted). The row is written before the
    comment, so a comment is never held without its row; a row whose comment is missing or no
    longer held is dropped by the queue (`social.spam.held.held_queue`)."""

    comment_id = models.CharField(max_length=64, primary_key=True)
    author_id = models.CharField(max_length=64, db_index=True)
    parent_id = models.CharField(max_length=64, blank=True)
    rule = models.CharField(max_length=32)  # the rule that held it: new_account_link, watched_word, duplicate, ...
    reason = models.CharField(max_length=300)
    held_at = models.DateTimeField(db_index=True)

    class Meta:
        ordering = ["held_at", "comment_id"]

    def __str__(self) -> str:
        return f"comment {self.comment_id} held ({self.rule})"


class TrustRecord(models.Model):
    """An account's trust level and the conduct it was earned by (social.spam.levels): refreshed
    from the account's doings at most every TRUST_REFRESH_SECONDS, or set by hand by staff
    (`manual_level`, which wins until cleared). Deleted with the account."""

    user = models.OneToOneField("social.User", primary_key=True, on_delete=models.CASCADE, related_name="trust")
    level = models.PositiveSmallIntegerField(default=0)  # as last computed (or set by hand)
    manual_level = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Set by staff: wins until cleared."
    )
    manual_note = models.CharField(max_length=300, blank=True)
    manual_by = models.CharField(max_length=150, blank=True)
    why = models.CharField(max_length=300, blank=True)  # the reason for `level`, as staff read it
    comments = models.PositiveIntegerField(default=0)  # visible comments, counted up to what the top level needs
    likes_received = models.PositiveIntegerField(default=0)  # on those comments, from established accounts
    days_visited = models.PositiveIntegerField(default=0)  # days the person was seen logged in (social.spam.visits)
    last_visit_day = models.DateField(null=True, blank=True)
    upheld_reports = models.PositiveIntegerField(default=0)  # its comments staff hid or deleted
    evaluated_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"user {self.user_id}: level {self.level}"
