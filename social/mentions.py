"""@mentions in comment bodies: finding them and resolving them to people (social.formatting links them).

`@name` names a person the way log-in does: in any letter case. A name is the longest run
of username characters after an `@` that is not itself inside a word or an address
(`bob@example.com` mentions nobody); a sentence's last dot or dash is not part of it unless
a person has that very name (`Thanks @bob.` mentions bob).

The body is stored as typed; only its rendering turns names into links (social.formatting), the
API's `body` is the raw text. Resolving names is one query of the relational database for a
comment (`mentioned_people`) or for a page of them (`mention_usernames`), on the
case-insensitive username index; a body without an `@` costs nothing.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.db.models.functions import Lower

# Username characters (social.services.USERNAME_PATTERN) after an "@" that follows no word
# character and no "@" (so an e-mail address mentions nobody).
MENTION_PATTERN = re.compile(r"(?<![\w@])@([A-Za-z0-9@.+_-]+)")
TRAILING_PUNCTUATION = ".+-@"  # may end a sentence rather than a name
USERNAME_MAX_LENGTH = 150  # Django's username field


@dataclass(frozen=True)
class MentionedPerson:
    user_id: str
    username: str


def _candidates(run: str) -> list[str]:
    """The names a run after "@" may be, longest first (lower case)."""
    names = [run.lower()]
    stripped = run.rstrip(TRAILING_PUNCTUATION).lower()
    if stripped and stripped != names[0]:
        names.append(stripped)
    return [name for name in names if len(name) <= USERNAME_MAX_LENGTH]


def mention_names(body: str) -> list[str]:
    """Every name the body might mention, lower case, in order of first appearance."""
    if "@" not in body:
        return []
    names: dict[str, None] = {}
    for match in MENTION_PATTERN.finditer(body):
        for name in _candidates(match.group(1)):
            names.setdefault(name)
    return list(names)


def _active_users(names: Iterable[str]) -> dict[str, MentionedPerson]:
    """Active accounts among `names` (lower case), by lower-case username: one query."""
    wanted = list(dict.fromkeys(names))
    if not wanted:
        return {}
    users = (
        get_user_model()
        .objects.annotate(username_lower=Lower("username"))
        .filter(username_lower__in=wanted, is_active=True)
        .values_list("pk", "username")
    )
    return {username.lower(): MentionedPerson(str(pk), username) for pk, username in users}


def _resolved(body: str, found: Mapping[str, object]) -> list[str]:
    """The lower-case names the body mentions that are in `found`, in order, each once."""
    people: dict[str, None] = {}
    for match in MENTION_PATTERN.finditer(body):
        name = next((candidate for candidate in _candidates(match.group(1)) if candidate in found), None)
        if name is not None:
            people.setdefault(name)
    return list(people)


def mention_name(run: str, usernames: Mapping[str, str]) -> str | None:
    """The known name (lower case, a key of `usernames`) a run of name characters after "@" mentions."""
    return next((candidate for candidate in _candidates(run) if candidate in usernames), None)


def mentioned_people(body: str) -> list[MentionedPerson]:
    """The people `body` mentions, in order of first mention, each once: one query (none without "@")."""
    found = _active_users(mention_names(body))
    return [found[name] for name in _resolved(body, found)]


def mention_usernames(bodies: Iterable[str]) -> dict[str, str]:
    """Lower-case name -> username of every person these bodies mention: one query for a page."""
    found = _active_users(name for body in bodies for name in mention_names(body))
    return {name: person.username for name, person in found.items()}


# At most this many people are notified by one comment's @mentions, over all its edits
# (fewer from an account at a lower trust level: TRUST_MENTIONS): a mention costs its reader's
# attention and the site a feed write, and a list of names must not become a broadcast.
MENTIONS_PER_COMMENT_MAX = 10


def mentions_allowed(*, author_id: str) -> int:
    """How many people one comment of the author may notify: their trust level's allowance
    (TRUST_MENTIONS), never above MENTIONS_PER_COMMENT_MAX."""
    from social.spam.levels import allowances, trust_level

    return min(MENTIONS_PER_COMMENT_MAX, allowances(trust_level(user_id=author_id)).mentions)


def mentions_to_notify(*, author_id: str, body: str, already: Collection[str] = ()) -> list[str]:
    """The user ids `body`'s @mentions notify: in order of first mention, never the author, nobody
    in `already` (the comment's `mentioned_ids`: an edit notifies only people not mentioned
    before), and no more than the comment's budget left. One relational query, and one more for
    the author's account age when someone is mentioned; none for a body without "@"."""
    people = [
        person.user_id
        for person in mentioned_people(body)
        if person.user_id != author_id and person.user_id not in already
    ]
    if not people:
        return []
    limit = mentions_allowed(author_id=author_id)
    return people[: max(0, limit - len(already))]
