"""Watched words (block, hold, flag, censor) matched through case, Unicode form, spacing, width and
look-alike letters; the pluggable spam check and its default rules; an audit line per decision."""

import logging
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from actions.comments import comment_create
from project.errors import ApplicationError
from social.models import Comment, HeldComment, ModerationAction, Report, WatchedWord
from social.moderation.selectors import case_reports
from social.selectors import comment_find
from social.spam.checks import BLOCK, SpamVerdict
from social.spam.words import strip_invisible, word_key, words_find
from tests.trust import established

pytestmark = pytest.mark.django_db(transaction=True)


def wide(text: str) -> str:
    """The text in full-width letters (NFKC makes them plain ones again)."""
    return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)


EVASIONS = [
    "buy viagra now",
    "buy VIAGRA now",
    "buy " + wide("viagra") + " now",  # full width
    "buy v i a g r a now",  # spaced
    "buy v.i.a.g.r.a now",
    "buy v-i-a-g-r-a now",
    "buy vi\u200bagra now",  # zero-width space
    "buy vi\u0430gra now",  # Cyrillic a
    "buy v\u0456agra now",  # Cyrillic i
    "buy vi\u03b1gr\u03b1 now",  # Greek alpha
    "buy v1agra now",  # digit for a letter
    "buy viágra now",  # accent
    "buy V\u0399AGRA now",  # Greek capital iota
]
ORDINARY = [
    "first class seats",
    "the classic assessment",
    "I am a b student",
    "see you in 2026",
    "via grading rules",
]


@pytest.mark.parametrize("body", EVASIONS)
def test_a_watched_word_is_found_however_it_is_disguised(body):
    words = [("viagra", word_key("Viagra"), "hold")]
    assert [hit.word for hit in words_find(strip_invisible(body), words)] == ["viagra"]


@pytest.mark.parametrize("body", ORDINARY)
def test_ordinary_words_are_not_mistaken_for_watched_ones(body):
    words = [(word, word_key(word), "hold") for word in ("viagra", "ass", "casino")]
    assert words_find(strip_invisible(body), words) == []


def test_a_phrase_matches_its_words_in_sequence_in_any_form():
    words = [("Cheap Pills", word_key("Cheap  Pills"), "block")]
    assert words_find("get CHEAP\tpills", words) and words_find(wide("cheap pills!"), words)
    assert not words_find("pills are not cheap", words)


@pytest.fixture
def people(make_user, settings):
    settings.HOLD_FOR_REVIEW_ENABLED = True
    old = make_user("old")
    old.date_joined = timezone.now() - timedelta(days=90)
    old.save(update_fields=["date_joined"])
    established(old)
    return {"old": old, "new": make_user("newbie"), "mod": make_user("mod", is_staff=True)}


def post(user, body):
    return comment_create(author_id=str(user.pk), body=body)


def test_block_refuses_naming_the_word_and_stores_nothing(people, api):
    WatchedWord.objects.create(word="Casino", action=WatchedWord.BLOCK)
    answer = api.as_user(people["old"]).post("/api/comments/", {"body": "best c a s i n o in town"}, format="json")
    assert answer.status_code == 400
    assert "Casino" in str(answer.json()) and "body" in str(answer.json())
    assert list(Comment.scan()) == []
    assert ModerationAction.objects.get(action="block").source == "screen"


def test_hold_flag_and_censor(people):
    WatchedWord.objects.create(word="crypto giveaway", action=WatchedWord.HOLD)
    WatchedWord.objects.create(word="darn", action=WatchedWord.CENSOR)
    WatchedWord.objects.create(word="pyramid", action=WatchedWord.FLAG)
    held = post(people["old"], "Join the CRYPTO  GIVEAWAY today")
    assert comment_find(comment_id=held.comment_id).hidden_by == "held"
    assert HeldComment.objects.get(comment_id=held.comment_id).rule == "watched_word"

    censored = post(people["old"], "Well, D\u0430RN it all")
    assert comment_find(comment_id=censored.comment_id).body == "Well, **** it all"

    flagged = post(people["old"], "Is this a p y r a m i d scheme?")
    stored = comment_find(comment_id=flagged.comment_id)
    assert not stored.hidden  # published
    report = Report.get(flagged.comment_id, "system")
    assert report.reason == "spam" and report.weight == 0 and "pyramid" in report.note
    assert {line.action for line in ModerationAction.objects.all()} == {"hold", "censor", "flag"}


def test_a_flag_is_reported_by_the_system_not_a_deleted_account(people, client):
    WatchedWord.objects.create(word="pyramid", action=WatchedWord.FLAG)
    flagged = post(people["old"], "Is this a pyramid scheme?")
    [view] = case_reports(comment_id=flagged.comment_id)
    assert view.by_system and view.reporter is None
    staff = people["mod"]
    staff.is_superuser = True
    staff.save(update_fields=["is_superuser"])
    client.force_login(staff)
    page = client.get(reverse("admin:dynamo-report-case", args=[flagged.comment_id])).content.decode()
    assert "data-system-report>the system</span>" in page and "pyramid" in page
    assert "a deleted account" not in page and "no standing yet" not in page


def test_staff_are_not_screened(people):
    WatchedWord.objects.create(word="casino", action=WatchedWord.BLOCK)
    comment = post(people["mod"], "Warning: the casino links are spam")
    assert not comment_find(comment_id=comment.comment_id).hidden


def refuse_everything(comment, author):
    return SpamVerdict(BLOCK, "test_rule", f"level {author.level}")


def answer_nonsense(comment, author):
    return "yes"


def test_the_spam_check_is_a_setting_and_each_decision_an_audit_line(people, settings, caplog):
    settings.SPAM_CHECK = "tests.social.test_spam_words.refuse_everything"
    with caplog.at_level(logging.INFO, logger="social.spam.audit"), pytest.raises(ApplicationError) as refused:
        post(people["old"], "hello there")
    assert refused.value.field == "body" and "level 1" in refused.value.message
    assert "rule test_rule" in caplog.text and "block" in caplog.text
    settings.SPAM_CHECK = "tests.social.test_spam_words.answer_nonsense"
    comment = post(people["old"], "hello again")
    assert HeldComment.objects.get(comment_id=comment.comment_id).rule == "check_error"


def test_the_default_check_holds_link_only_bodies_repeated_text_and_a_burst(people, settings):
    settings.HOLD_FOR_REVIEW_ENABLED = True
    link_only = post(people["old"], "https://spam.example/a")
    assert HeldComment.objects.get(comment_id=link_only.comment_id).rule == "link_only"

    text = "Earn money from home with this one simple trick today"
    rules = []
    for number in range(4):
        author = people["old"] if number < 2 else people["new"]
        rules.append(comment_find(comment_id=post(author, text).comment_id).hidden_by)
    assert rules == [None, None, "held", "held"]  # third and fourth time, from a new account
    assert HeldComment.objects.filter(rule="duplicate").count() == 2


def test_a_new_accounts_burst_is_held(people, settings):
    settings.SPAM_BURST_LIMIT = "2/10min"
    shown = [not comment_find(comment_id=post(people["new"], f"note {n}").comment_id).hidden for n in range(3)]
    assert shown == [True, True, False]
    assert HeldComment.objects.get().rule == "burst"


def test_a_spam_budget_the_limit_store_cannot_read_fails_the_system_check(settings):
    from project.limits.checks import limit_settings_errors

    assert limit_settings_errors() == []
    settings.SPAM_BURST_LIMIT = "lots"
    assert [error for error in limit_settings_errors() if error.startswith("SPAM_BURST_LIMIT='lots'")]
