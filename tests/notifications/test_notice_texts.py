"""Notices (a moderation decision, failed log-ins) are stored in no language and read in the
reader's: changing one's language changes the notices already in the inbox; a notice stored as
English prose before still reads as it was."""

from __future__ import annotations

import pytest
from django.utils import translation

from notifications.feed.events import FeedEvent
from notifications.feed.notice_texts import notice_body
from notifications.feed.selectors import feed_entries_list, feed_read
from notifications.feed.services import feed_append
from notifications.login_notices import login_failures_notice
from notifications.moderation_notices import _author_event, _reporter_event

pytestmark = pytest.mark.django_db(transaction=True)


def texts(user_id: str, language: str) -> list[tuple[str, str]]:
    with translation.override(language):
        return [(entry.text, entry.body) for entry in feed_entries_list(user_id=user_id).results]


def test_a_moderation_notice_is_stored_in_no_language_and_read_in_the_readers(make_user):
    user_id = str(make_user("author").pk)
    event = _author_event(comment_id="c1", body="Ein Kommentar, der blieb", decision="hide", by="reports", episode=0)
    assert event is not None
    feed_append(user_id=user_id, event=event)
    feed_append(user_id=user_id, event=_reporter_event(comment_id="c2", reporter_id=user_id, hidden=False))
    stored = [entry.body for entry in feed_read(user_id=user_id).entries]
    assert all("was hidden" not in body and "The moderators" not in body for body in stored), stored
    [(kept_title, kept), (hidden_title, hidden)] = texts(user_id, "en")
    assert hidden_title == "Your comment was hidden"
    assert hidden.startswith("Your comment “Ein Kommentar, der blieb” was hidden after several people reported it")
    assert kept_title == "Your report was looked at" and "stays up" in kept
    [(kept_title, kept), (hidden_title, hidden)] = texts(user_id, "ja")
    assert hidden_title == "あなたのコメントは非表示になりました" and "「Ein Kommentar, der blieb」" in hidden
    assert "非表示" in hidden and "stays up" not in kept
    [(kept_title, kept), (hidden_title, hidden)] = texts(user_id, "pl")
    assert "„Ein Kommentar, der blieb”" in hidden and "ukryty" in hidden and "rozpatrzone" in kept_title


@pytest.mark.parametrize(
    ("language", "failures", "addresses", "expected"),
    [
        ("en", 1, 1, "1 log-in with a wrong password or code today, from 1 network."),
        ("en", 3, 2, "3 log-ins with a wrong password or code today, from 2 networks."),
        ("ja", 3, 2, "本日、誤ったパスワードまたはコードによるログインが3回、2つのネットワークからありました。"),
        ("pl", 1, 1, "Dziś 1 logowanie z błędnym hasłem lub kodem, z 1 sieci."),
        ("pl", 3, 2, "Dziś 3 logowania z błędnym hasłem lub kodem, z 2 sieci."),
        ("pl", 5, 5, "Dziś 5 logowań z błędnym hasłem lub kodem, z 5 sieci."),
    ],
)
def test_a_login_notice_counts_in_the_readers_language(make_user, language, failures, addresses, expected):
    user_id = str(make_user("owner").pk)
    login_failures_notice(user_id=user_id, failures=failures, addresses=addresses)
    [(_title, body)] = texts(user_id, language)
    assert body.startswith(expected)


def test_a_notice_stored_as_english_prose_before_still_reads_as_it_was(make_user):
    user_id = str(make_user("old").pk)
    old = "3 log-ins with a wrong password or code today, from 3 networks. If that was not you, nothing is needed."
    feed_append(
        user_id=user_id,
        event=FeedEvent(event_id="old", kind="notice", actor_id=None, rollup_key=None, title="Someone tried", body=old),
    )
    assert texts(user_id, "ja")[0][1] == old


def test_an_unknown_notice_is_refused_when_written():
    with pytest.raises(ValueError):
        notice_body("no-such-notice")
