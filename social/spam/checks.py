"""The spam check: the callable SPAM_CHECK names, given a new comment and its author's record,
answers publish, hold or block with a reason and the rule that decided.

The default, `local_check`, uses no outside service. Its rules, each counted in the shared limit
store (project/limits/store.py: every process on every machine counts together; not lifted by
RATE_LIMITS_ENABLED=False, which is for load tests):
- `link_only`: a body that is little but links (fewer than LINK_ONLY_WORDS words besides them) is held;
- `duplicate`: the same text (folded as watched words are, at least DUPLICATE_MIN_CHARS long)
  posted more often than SPAM_DUPLICATE_LIMIT allows, whoever posted it: held when its author is
  at the lowest trust level (established accounts quoting a popular line are not spammers);
- `burst`: an account at the lowest level posting more than SPAM_BURST_LIMIT allows: held.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from django.conf import settings
from django.utils.module_loading import import_string

from project.limits.store import limit_hit
from social.spam.words import strip_invisible, tokens_of

if TYPE_CHECKING:
    from social.models import Comment

PUBLISH = "publish"
HOLD = "hold"
BLOCK = "block"
DECISIONS = (PUBLISH, HOLD, BLOCK)

# An address with its scheme, as formatting links them, or a Markdown link's target.
LINK = re.compile(r"(?i)\b(?:https?|ftp)://[^\s<>()\[\]]+|\bwww\.[^\s<>()\[\]]+")
LINK_ONLY_WORDS = 3
DUPLICATE_MIN_CHARS = 20


@dataclass(frozen=True)
class AuthorRecord:
    """What the spam check knows of the author: their id, trust level and whether they are staff."""

    user_id: str
    level: int
    staff: bool = False


@dataclass(frozen=True)
class SpamVerdict:
    decision: str  # publish, hold or block
    rule: str  # the rule that decided ("none" when nothing objected)
    reason: str = ""


CLEAN = SpamVerdict(PUBLISH, "none")

SpamCheck = Callable[["Comment", AuthorRecord], SpamVerdict]


def links_in(body: str) -> list[str]:
    """The links of a body (addresses with their scheme, or starting with www.)."""
    return LINK.findall(strip_invisible(body))


def _text_digest(body: str) -> str:
    words = " ".join(token.text for token in tokens_of(strip_invisible(body)))
    return hashlib.sha256(words.encode()).hexdigest()[:32] if len(words) >= DUPLICATE_MIN_CHARS else ""


def local_check(comment: Comment, author: AuthorRecord) -> SpamVerdict:
    """The default spam check (the module's docstring). Reads nothing; counts the text in the
    limit store (one conditional write) and, at the lowest level, the author's burst (one more)."""
    links = links_in(comment.body)
    if links:
        rest = LINK.sub(" ", strip_invisible(comment.body))
        if len(tokens_of(rest)) < LINK_ONLY_WORDS:
            return SpamVerdict(HOLD, "link_only", "little but links")
    lowest = author.level == 0 and not author.staff
    digest = _text_digest(comment.body)
    if digest:
        seen = limit_hit(name="spam_text", subject=digest, rules=settings.SPAM_DUPLICATE_LIMIT, liftable=False)
        if not seen.allowed and lowest:
            return SpamVerdict(HOLD, "duplicate", "the same text was posted several times just now")
    if lowest:
        burst = limit_hit(name="spam_burst", subject=author.user_id, rules=settings.SPAM_BURST_LIMIT, liftable=False)
        if not burst.allowed:
            return SpamVerdict(HOLD, "burst", "a new account posting fast")
    return CLEAN


@lru_cache(maxsize=4)
def _load(path: str) -> SpamCheck:
    check: SpamCheck = import_string(path)
    return check


def spam_check() -> SpamCheck:
    """The callable SPAM_CHECK names (a dotted path; imported once per process)."""
    return _load(settings.SPAM_CHECK)
