"""The spam corpus (spam_corpus.json beside this file) and its measure, shared by
tests/social/test_spam_corpus.py and bench/spam.py.

The corpus: 55 spam posts (links from fresh accounts, the same text from several fresh accounts,
watched words, look-alike evasions of them, link-only bodies) and 200 ordinary posts, half from
new accounts (`newdoc*`, three each; a few with a link or a mention) and half from established
ones (`colleague*`, some with links and mentions). Authors named `fresh*` and `newdoc*` are new
accounts; `old_spam*` and `colleague*` are 90 days old. Each post goes through
`actions.comments.comment_create` as the site's pages and API post it; then everything a
non-staff person could read is read: the whole timeline (anonymous and signed in), every
author's profile list, every account's feed (mentions) and each spam comment by id.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from django.contrib.auth import get_user_model
from django.utils import timezone

from actions.comments import comment_create
from notifications.feed.selectors import feed_entries_list
from project.errors import ApplicationError
from social import selectors
from social.models import HeldComment, WatchedWord
from tests.trust import established

CORPUS = Path(__file__).with_name("spam_corpus.json")
NEW_PREFIXES = ("fresh", "newdoc")


@dataclass
class Figures:
    spam: int = 0
    spam_blocked: int = 0
    spam_held: int = 0
    spam_published: int = 0
    spam_seen: int = 0  # spam a non-staff person can find on any surface read
    ordinary: int = 0
    ordinary_published: int = 0
    ordinary_held: int = 0
    ordinary_blocked: int = 0
    rules: Counter[str] = field(default_factory=Counter)  # what held the spam

    def lines(self) -> list[str]:
        published = 100 * self.ordinary_published / max(1, self.ordinary)
        rules = ", ".join(f"{rule} {count}" for rule, count in self.rules.most_common())
        return [
            f"spam posts:              {self.spam}",
            f"  blocked:               {self.spam_blocked}",
            f"  held for review:       {self.spam_held}  ({rules})",
            f"  published:             {self.spam_published}",
            f"  seen by non-staff:     {self.spam_seen}",
            f"ordinary posts:          {self.ordinary}",
            f"  published at once:     {self.ordinary_published}  ({published:.1f}%)",
            f"  held for review:       {self.ordinary_held}",
            f"  blocked:               {self.ordinary_blocked}",
        ]


def _accounts(names: set[str]) -> dict[str, str]:
    """The corpus's authors as accounts: new ones just made, the others 90 days old and established
    (a member, as their conduct would have made them)."""
    users = {}
    for name in sorted(names):
        user = get_user_model().objects.create_user(username=name, password="pw-Secret-123", email_verified=True)
        if not name.startswith(NEW_PREFIXES):
            user.date_joined = timezone.now() - timedelta(days=90)
            user.save(update_fields=["date_joined"])
            established(user)
        users[name] = str(user.pk)
    return users


def _seen_ids(users: dict[str, str], reader_id: str) -> set[str]:
    """Every comment id a non-staff reader finds: the timeline (signed in and anonymous), each
    author's profile list and every account's feed entries."""
    seen: set[str] = set()
    for viewer in (reader_id, None):
        cursor = None
        while True:
            page = selectors.comment_timeline(viewer_id=viewer, cursor=cursor, limit=selectors.PAGE_SIZE_MAX)
            seen.update(view.id for view in page.results)
            if not page.next_cursor:
                break
            cursor = page.next_cursor
    for name, user_id in users.items():
        page = selectors.profile_comments(author_id=user_id, viewer_id=reader_id, limit=selectors.PAGE_SIZE_MAX)
        seen.update(view.id for view in page.results)
        for entry in feed_entries_list(user_id=user_id).results:
            if not entry.removed:  # a reply or mention points at its comment: /c/<id>/ or /c/<parent>/#c-<id>
                seen.update(part.strip("/#c-") for part in entry.url.replace("#c-", "/").split("/") if part)
    return seen


def corpus_run() -> Figures:
    """Post the corpus and measure it (see the module's docstring); HOLD_FOR_REVIEW_ENABLED must be on."""
    data = json.loads(CORPUS.read_text(encoding="utf-8"))
    for word in data["watched_words"]:
        WatchedWord.objects.get_or_create(word=word["word"], defaults={"action": word["action"]})
    posts = data["posts"]
    users = _accounts({post["author"] for post in posts} | {"reader"})
    figures = Figures()
    spam_ids: list[str] = []
    for post in posts:
        spam = post["kind"] == "spam"
        try:
            comment = comment_create(author_id=users[post["author"]], body=post["body"])
        except ApplicationError:
            figures.spam_blocked += spam
            figures.ordinary_blocked += not spam
            continue
        held = bool(comment.hidden)
        if spam:
            spam_ids.append(comment.comment_id)
            figures.spam_held += held
            figures.spam_published += not held
            if held:
                figures.rules[HeldComment.objects.get(comment_id=comment.comment_id).rule] += 1
        else:
            figures.ordinary_held += held
            figures.ordinary_published += not held
    figures.spam = sum(post["kind"] == "spam" for post in posts)
    figures.ordinary = len(posts) - figures.spam
    seen = _seen_ids(users, users["reader"])
    by_id = sum(_visible_by_id(comment_id, users["reader"]) for comment_id in spam_ids)
    figures.spam_seen = len(seen & set(spam_ids)) + by_id
    return figures


def _visible_by_id(comment_id: str, reader_id: str) -> bool:
    try:
        selectors.comment_get(comment_id=comment_id, viewer_id=reader_id)
    except ApplicationError:
        return False
    return True
