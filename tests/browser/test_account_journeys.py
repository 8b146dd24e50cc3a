"""Journeys in Chromium at phone (390 px) and desktop (1280 px) widths: editing and
deleting one's own comment, profiles and the display name, changing and resetting a
password by e-mail. Each page on the way passes axe-core. The forms post without
JavaScript too (tests/social/test_comment_edit_delete.py, test_profiles.py)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from actions.comments import comment_create
from tests.browser.conftest import DESKTOP, PHONE, axe_violations, horizontal_overflow
from tests.notifications.mail_helpers import mailed

PASSWORD = "correct-Horse-battery-9"
NEW_PASSWORD = "another-Staple-battery-7"
NEW_PASSWORD_LABEL = re.compile(r"^New password:?$")  # not its confirmation
WIDTHS = pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390px", "1280px"])


def checked(page, problems: list[str], name: str) -> None:
    """Collect what is wrong with the page as it is now (axe, sideways scrolling)."""
    problems += [f"{name}: {finding}" for finding in axe_violations(page)]
    if horizontal_overflow(page) > 0:
        problems.append(f"{name}: wider than the window")


@WIDTHS
def test_an_author_edits_then_deletes_a_comment_and_the_thread_stays_readable(pages, make_user, viewport):
    alice, bob = make_user("alice", display_name="Alice"), make_user("bob", display_name="Bob")
    comment = comment_create(author_id=str(alice.pk), body="Helo everyone").comment_id
    comment_create(author_id=str(bob.pk), body="Hi Alice!", parent_id=comment)
    problems: list[str] = []
    page = pages.open(f"/c/{comment}/", user=alice, viewport=viewport)

    page.locator(f"#c-{comment}").get_by_role("link", name="Edit your comment").click()
    checked(page, problems, "edit")
    page.get_by_label("Your comment").fill("Hello everyone")
    page.get_by_role("button", name="Save", exact=True).click()

    article = page.locator(f"#c-{comment}")
    expect(article).to_contain_text("Hello everyone")
    expect(article.locator(".edited")).to_contain_text("edited")
    expect(page.get_by_text("Your comment was saved.")).to_be_visible()

    article.get_by_role("link", name="Delete your comment").click()
    checked(page, problems, "delete")
    page.get_by_role("button", name="Delete").click()

    expect(page.get_by_text("Your comment was deleted.")).to_be_visible()
    deleted = page.locator(f"#c-{comment}")  # on the timeline still: a reply hangs under it
    expect(deleted).to_contain_text("deleted by its author")
    expect(deleted).not_to_contain_text("Hello everyone")
    deleted.get_by_role("link", name="Replies").click()
    expect(page.locator("section.replies")).to_contain_text("Hi Alice!")
    checked(page, problems, "deleted-thread")
    assert problems == []
    assert pages.console_errors == []


@WIDTHS
def test_a_person_finds_a_profile_from_a_name_and_changes_their_own_name(pages, make_user, viewport):
    alice, bob = make_user("alice", display_name="Alice"), make_user("bob", display_name="Bob")
    comment_create(author_id=str(alice.pk), body="Alice's first")
    comment_create(author_id=str(bob.pk), body="Bob's thought")
    problems: list[str] = []
    page = pages.open("/", user=bob, viewport=viewport)

    page.locator("article.comment", has_text="Alice's first").get_by_role("link", name="Alice @alice").click()
    expect(page).to_have_url(re.compile(r"/u/alice/$"))
    expect(page.get_by_role("heading", level=1)).to_have_text("Alice")
    expect(page.locator("section.timeline")).to_contain_text("Alice's first")
    expect(page.locator("section.timeline")).not_to_contain_text("Bob's thought")
    checked(page, problems, "profile")

    page.goto("/u/bob/")
    page.get_by_role("link", name=re.compile("display name", re.I)).click()
    checked(page, problems, "settings")
    page.get_by_label("Display name").fill("Robert")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_text("your comments now show “Robert”")).to_be_visible()
    page.goto("/")
    expect(page.locator("article.comment", has_text="Bob's thought")).to_contain_text("Robert")
    assert problems == []
    assert pages.console_errors == []


@WIDTHS
def test_a_person_resets_a_forgotten_password_by_email_then_changes_it(pages, make_user, viewport):
    alice = make_user("alice", display_name="Alice", password=PASSWORD)
    alice.email, alice.email_verified = "alice@example.com", True  # a reset mails verified addresses only
    alice.save()
    problems: list[str] = []
    page = pages.open("/accounts/login/", viewport=viewport)

    page.get_by_role("link", name="Forgot your password?").click()
    checked(page, problems, "reset")
    page.get_by_label("Email").fill("alice@example.com")
    page.get_by_role("button", name="Send the link").click()
    expect(page.get_by_role("heading", name="Check your e-mail")).to_be_visible()
    checked(page, problems, "reset-sent")

    [message] = mailed()
    link = re.search(r"https?://\S+/accounts/password/reset/\S+/", message.body).group(0)
    page.goto(link)
    expect(page.get_by_role("heading", name="Choose a new password")).to_be_visible()
    checked(page, problems, "reset-confirm")
    page.get_by_label(NEW_PASSWORD_LABEL).fill(NEW_PASSWORD)
    page.get_by_label("New password confirmation").fill(NEW_PASSWORD)
    page.get_by_role("button", name="Set the password").click()
    expect(page.get_by_role("heading", name="Password set")).to_be_visible()

    page.get_by_role("link", name="Log in").last.click()
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", NEW_PASSWORD)
    page.get_by_role("button", name=re.compile("log in", re.I)).click()
    expect(page.get_by_role("button", name="Log out")).to_be_visible()

    page.goto("/me/settings/")
    page.get_by_role("link", name="Change your password").click()
    checked(page, problems, "password-change")
    page.get_by_label("Old password").fill(NEW_PASSWORD)
    page.get_by_label(NEW_PASSWORD_LABEL).fill(PASSWORD)
    page.get_by_label("New password confirmation").fill(PASSWORD)
    page.get_by_role("button", name="Change password").click()
    expect(page.get_by_role("heading", name="Password changed")).to_be_visible()
    alice.refresh_from_db()
    assert alice.check_password(PASSWORD)
    assert problems == []
    assert pages.console_errors == []
