"""The screen every new comment passes before anyone sees it: watched words, then the spam check
(SPAM_CHECK), then the author's trust level's allowances (social.spam.levels: links per comment,
TRUST_LINKS, none at the lowest level; levels all of whose comments are held, TRUST_HOLD_LEVELS).
Staff are never screened.

The answer (`Verdict`) is one of publish, hold (stored for its author and staff only, until staff
approve: social.spam.held) or block (a 400 naming what refused it, nothing stored), with the body
as it is stored (watched words to censor masked) and the watched words to flag. Each decision is
one audit line on the `social.spam.audit` logger naming its rule; a decision other than a plain
publish is also a line of the moderation audit log (`ModerationAction`, source "screen").
HOLD_FOR_REVIEW_ENABLED=False: the spam check is not run and nothing is held (blocks, flags and
censoring stay).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.auth import get_user_model

from social.spam.checks import BLOCK, DECISIONS, HOLD, PUBLISH, AuthorRecord, SpamVerdict, links_in, spam_check
from social.spam.levels import allowances, trust_level, trust_visit
from social.spam.models import WatchedWord
from social.spam.words import censored, strip_invisible, words_find

if TYPE_CHECKING:
    from social.models import Comment

audit = logging.getLogger("social.spam.audit")


@dataclass(frozen=True)
class Verdict:
    decision: str  # publish, hold or block
    rule: str  # what decided: none, watched_word, new_account_link, or the spam check's rule
    reason: str
    body: str  # the body as stored: watched words to censor masked
    flagged: tuple[str, ...] = field(default=())  # watched words to flag (published, reported by the system)
    censored: tuple[str, ...] = field(default=())


def author_record(user_id: str) -> AuthorRecord:
    """The author as the screen and the spam check see them: their trust level (social.spam.levels;
    writing counts today as a day visited) and whether they are staff."""
    try:
        staff = get_user_model().objects.only("is_staff").get(pk=int(user_id)).is_staff
    except (ValueError, get_user_model().DoesNotExist):
        staff = False
    trust_visit(user_id=user_id)
    return AuthorRecord(user_id=user_id, level=trust_level(user_id=user_id), staff=bool(staff))


def watched_words() -> list[tuple[str, str, str]]:
    """Every watched word as `(word, key, action)`: one query."""
    return list(WatchedWord.objects.values_list("word", "key", "action"))


def comment_screen(*, comment: Comment, author: AuthorRecord) -> Verdict:
    """Decide what happens to `comment` (unsaved) before anyone sees it; writes nothing but the
    spam check's counts and the audit lines (see the module's docstring)."""
    if author.staff:
        return _decided(comment, author, Verdict(PUBLISH, "staff", "", comment.body))
    holding = bool(settings.HOLD_FOR_REVIEW_ENABLED)
    text = strip_invisible(comment.body)
    hits = words_find(text, watched_words())
    blocked = [hit.word for hit in hits if hit.action == WatchedWord.BLOCK]
    if blocked:
        return _decided(comment, author, Verdict(BLOCK, "watched_word", f"contains “{blocked[0]}”", comment.body))
    to_mask = [hit for hit in hits if hit.action == WatchedWord.CENSOR]
    body = censored(text, to_mask) if to_mask else comment.body
    flagged = tuple(dict.fromkeys(hit.word for hit in hits if hit.action == WatchedWord.FLAG))
    masked = tuple(dict.fromkeys(hit.word for hit in to_mask))

    def verdict(decision: str, rule: str, reason: str) -> Verdict:
        return Verdict(decision, rule, reason, body, flagged, masked)

    held = [hit.word for hit in hits if hit.action == WatchedWord.HOLD]
    if held and holding:
        return _decided(comment, author, verdict(HOLD, "watched_word", f"contains “{held[0]}”"))
    if holding:
        checked = _checked(comment, author)
        if checked.decision != PUBLISH:
            return _decided(comment, author, verdict(checked.decision, checked.rule, checked.reason))
        allowed = allowances(author.level)
        if allowed.hold_all:
            return _decided(comment, author, verdict(HOLD, "level_held", f"every comment of level {author.level}"))
        links = len(links_in(comment.body))
        if links > allowed.links:
            rule, reason = (
                ("new_account_link", "a link from a new account")
                if allowed.links == 0
                else ("too_many_links", f"{links} links, level {author.level} may post {allowed.links}")
            )
            return _decided(comment, author, verdict(HOLD, rule, reason))
    rule = "watched_word" if flagged or masked else "none"
    return _decided(comment, author, verdict(PUBLISH, rule, ", ".join((*flagged, *masked))))


def _checked(comment: Comment, author: AuthorRecord) -> SpamVerdict:
    """The spam check's answer; one it does not give as publish, hold or block is a hold."""
    answer = spam_check()(comment, author)
    if not isinstance(answer, SpamVerdict) or answer.decision not in DECISIONS:
        audit.error("spam check %s answered %r: held", settings.SPAM_CHECK, answer)
        return SpamVerdict(HOLD, "check_error", "the spam check gave no answer")
    return answer


def _decided(comment: Comment, author: AuthorRecord, verdict: Verdict) -> Verdict:
    audit.info(
        "spam screen: %s comment %s by user %s (level %d), rule %s%s",
        verdict.decision,
        comment.comment_id,
        author.user_id,
        author.level,
        verdict.rule,
        f": {verdict.reason}" if verdict.reason else "",
    )
    return verdict


__all__ = ["BLOCK", "HOLD", "PUBLISH", "Verdict", "author_record", "comment_screen"]
