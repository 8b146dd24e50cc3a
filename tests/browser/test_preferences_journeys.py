"""Journeys in Chromium at phone (390 px) and desktop (1280 px) widths: choosing what reaches
you on /me/notifications/, and muting and watching a thread from a comment's page, then
undoing it from the settings. Each page on the way passes axe-core and fits the window.
The same forms work without JavaScript (tests/notifications/test_preferences_pages.py)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from actions.comments import comment_create
from notifications.preferences.selectors import preferences_get, thread_state
from tests.browser.conftest import DESKTOP, PHONE, axe_violations, horizontal_overflow

WIDTHS = pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390px", "1280px"])


def checked(page, problems: list[str], name: str) -> None:
    """Collect what is wrong with the page as it is now (axe, sideways scrolling)."""
    problems += [f"{name}: {finding}" for finding in axe_violations(page)]
    if horizontal_overflow(page) > 0:
        problems.append(f"{name}: wider than the window")


@WIDTHS
def test_a_person_chooses_what_reaches_them(pages, make_user, viewport):
    bob = make_user("bob", display_name="Bob")
    problems: list[str] = []
    page = pages.open("/me/settings/", user=bob, viewport=viewport)

    page.get_by_role("link", name="Notifications and e-mail").click()
    expect(page.get_by_role("heading", name="Notification settings")).to_be_visible()
    checked(page, problems, "settings")
    expect(page.get_by_label("Messages from the staff: Inbox")).to_be_checked()
    expect(page.get_by_label("Messages from the staff: Inbox")).to_be_disabled()
    page.get_by_label("Likes of your comments: Inbox").uncheck()
    page.get_by_label("Replies to your comments, and in threads you watch: E-mail").check()
    page.get_by_label("Daily").check()
    page.get_by_role("button", name="Save").click()

    expect(page.get_by_text("Saved: your notification settings.")).to_be_visible()
    expect(page.get_by_label("Likes of your comments: Inbox")).not_to_be_checked()
    expect(page.get_by_label("Replies to your comments, and in threads you watch: E-mail")).to_be_checked()
    expect(page.get_by_label("Daily")).to_be_checked()
    checked(page, problems, "saved")
    stored = preferences_get(user_id=str(bob.pk), consistent=True)
    assert not stored.wants("like", "inbox") and stored.wants("reply", "email") and stored.digest == "daily"
    assert problems == []
    assert pages.console_errors == []


@WIDTHS
def test_a_person_watches_then_mutes_a_thread_and_unmutes_it_from_the_settings(pages, make_user, viewport):
    alice, bob = make_user("alice", display_name="Alice"), make_user("bob", display_name="Bob")
    root = comment_create(author_id=str(alice.pk), body="Which stethoscope do you use?").comment_id
    reply = comment_create(author_id=str(alice.pk), body="I will start: a Littmann.", parent_id=root).comment_id
    problems: list[str] = []
    page = pages.open(f"/c/{reply}/", user=bob, viewport=viewport)

    page.get_by_role("button", name="Watch", exact=True).click()
    expect(page.get_by_text("Watching: every reply in this thread notifies you.")).to_be_visible()
    expect(page.get_by_role("button", name="Stop watching")).to_be_visible()
    checked(page, problems, "watching")
    assert thread_state(thread_id=root, user_id=str(bob.pk)) == "watch"

    page.get_by_role("button", name="Mute", exact=True).click()
    expect(page.get_by_text("Muted: nothing from this thread reaches you now.")).to_be_visible()
    expect(page.get_by_role("button", name="Unmute")).to_be_visible()
    expect(page.get_by_role("button", name="Watch", exact=True)).to_be_visible()  # the mute replaced the watch
    checked(page, problems, "muted")
    assert thread_state(thread_id=root, user_id=str(bob.pk)) == "mute"

    page.get_by_role("link", name="Notification settings").click()
    muted = page.locator("section", has=page.get_by_role("heading", name="Muted threads"))
    expect(muted).to_contain_text("Alice: Which stethoscope do you use?")
    watched = page.locator("section", has=page.get_by_role("heading", name="Threads you watch"))
    expect(watched).to_contain_text("You watch no thread.")
    checked(page, problems, "settings-lists")
    muted.get_by_role("button", name=re.compile("^Unmute")).click()

    expect(page.get_by_text("Unmuted: this thread notifies you again.")).to_be_visible()
    expect(muted).to_contain_text("You muted no thread.")
    assert thread_state(thread_id=root, user_id=str(bob.pk)) is None
    assert problems == []
    assert pages.console_errors == []
