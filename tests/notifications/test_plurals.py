"""Every notification text with a count, in every language, against the language's plural rules.

The expected form is worked out here from the CLDR rule of each language (never read from the
catalogue), so a catalogue entry in the wrong slot, a missing form or "1 others" fails.
"""

from __future__ import annotations

import re

import pytest
from django.utils import translation

from notifications.feed.selectors import feed_entry_text
from notifications.like_selectors import like_text
from notifications.mail.checks import Recipient
from notifications.mail.content import digest_message
from social.selectors import Author

COUNTS = (0, 1, 2, 3, 4, 5, 11, 12, 21, 22, 25, 101, 102)
LANGUAGES = ("en", "ja", "pl")


def polish_category(n: int) -> str:
    """CLDR's Polish rule for whole numbers: one (1), few (2-4, 22-24, ... not 12-14), many (the rest)."""
    if n == 1:
        return "one"
    if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
        return "few"
    return "many"


# What each form of "N other people" reads like, by language and category.
OTHERS = {
    ("en", "one"): "and {n} other ",
    ("en", "other"): "and {n} others ",
    ("ja", "other"): "他{n}人",
    ("pl", "one"): "i {n} inna osoba ",
    ("pl", "few"): "i {n} inne osoby ",
    ("pl", "many"): "i {n} innych osób ",
}


def others_phrase(language: str, n: int) -> str:
    if language == "en":
        category = "one" if n == 1 else "other"
    elif language == "ja":
        category = "other"  # Japanese has one form
    else:
        category = polish_category(n)
    return OTHERS[(language, category)].format(n=n)


def test_the_polish_rule_itself():
    assert [polish_category(n) for n in (1, 2, 4, 5, 11, 12, 14, 21, 22, 25, 101, 102, 112, 122)] == [
        "one", "few", "few", "many", "many", "many", "many", "many", "few", "many", "many", "few", "many", "few",
    ]  # fmt: skip


REACTED = {"en": "reacted to your comment", "ja": "リアクションしました", "pl": "na Twój komentarz"}


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("reaction", [False, True], ids=["like", "reaction"])
@pytest.mark.parametrize("others", COUNTS)
def test_likes_name_the_first_liker_and_count_the_others(language, reaction, others):
    with translation.override(language):
        text = like_text(["Łucja Ünal"], others + 1, reaction=reaction)
    assert (REACTED[language] in text) is reaction, text
    assert "Łucja Ünal" in text  # a name is never translated
    assert not re.search(r"\b1 others", text)
    if others == 0:
        assert str(others) not in text.replace("Łucja Ünal", "")
    else:
        assert others_phrase(language, others) in text + " ", text


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("others", COUNTS)
def test_replies_name_the_newest_and_count_the_others(language, others):
    actors = [Author("1", "bob", "Bob"), Author("2", "eve", "Eve")]
    with translation.override(language):
        text = feed_entry_text(kind="reply", actors=actors, actor_count=others + 1, title="")
        watched = feed_entry_text(kind="thread", actors=actors, actor_count=others + 1, title="")
    for written in (text, watched):
        assert written.startswith("Bob")
        if others == 1:  # two people: both named
            assert "Eve" in written and "1" not in written
        elif others > 1:
            assert others_phrase(language, others) in written + " ", written


PEOPLE = {  # "N people liked your comment" (no name left), by language and category
    ("en", "other"): "{n} people ",
    ("ja", "other"): "{n}人が",
    ("pl", "few"): "{n} osoby ",
    ("pl", "many"): "{n} osób ",
}


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("reaction", [False, True], ids=["like", "reaction"])
@pytest.mark.parametrize("count", [n for n in COUNTS if n >= 2])
def test_likes_with_no_name_left_count_people(language, reaction, count):
    with translation.override(language):
        text = like_text([], count, reaction=reaction)
    assert (REACTED[language] in text) is reaction, text
    category = "other" if language != "pl" else polish_category(count)
    assert PEOPLE[(language, category)].format(n=count) in text + " ", text


UNREAD = {
    ("en", "one"): "{n} unread notification on",
    ("en", "other"): "{n} unread notifications on",
    ("ja", "other"): "未読の通知が{n}件",
    ("pl", "one"): "{n} nieprzeczytane powiadomienie ",
    ("pl", "few"): "{n} nieprzeczytane powiadomienia ",
    ("pl", "many"): "{n} nieprzeczytanych powiadomień ",
}


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("count", [n for n in COUNTS if n >= 1])
def test_the_digest_subject_counts_unread_notifications(language, count, settings):
    settings.SITE_URL = "https://social.example"
    recipient = Recipient(user_id="7", username="ann", name="Ann", address="ann@example.com", locale=language)
    with translation.override(language):
        message = digest_message(recipient=recipient, period="2026-11-25", items=[], more=count)
    if language == "en":
        category = "one" if count == 1 else "other"
    else:
        category = "other" if language == "ja" else polish_category(count)
    assert UNREAD[(language, category)].format(n=count) in message.subject, message.subject
