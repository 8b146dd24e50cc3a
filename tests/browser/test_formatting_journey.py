"""Formatting a comment in Chromium, with and without JavaScript: Alice writes Markdown, opens the
formatting help, presses Preview (the page comes back with the text still in the box and the
comment rendered, nothing posted), then posts it and sees it formatted on the timeline."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from social import selectors
from tests.browser.conftest import axe_violations

pytestmark = pytest.mark.django_db(transaction=True)

TEXT = (
    "**Night shift** tips for @bob:\n\n- sleep *early*\n- `coffee()` before 3\n\n"
    "More: https://example.org/rota <b>not bold</b>"
)


@pytest.mark.parametrize("javascript", [True, False], ids=["with JavaScript", "without JavaScript"])
def test_format_a_comment_with_the_preview_and_post_it(pages, make_user, javascript):
    alice = make_user("alice", display_name="Alice")
    make_user("bob", display_name="Bob")
    page = pages.open("/", user=alice, javascript=javascript)
    page.get_by_text("Formatting help").click()
    expect(page.locator(".compose-help")).to_contain_text("**bold**")
    page.get_by_label("What's on your mind").fill(TEXT)

    page.get_by_role("button", name="Preview").click()

    expect(page).to_have_url(re.compile(r"/#preview$"))  # the page comes back at the preview
    preview = page.locator(".compose-preview")
    expect(preview).to_contain_text("not posted yet")
    expect(preview.locator("strong")).to_have_text("Night shift")
    expect(preview.locator("li")).to_have_count(2)
    expect(preview.locator("a.mention")).to_have_attribute("href", "/u/bob/")
    expect(page.get_by_label("What's on your mind")).to_have_value(TEXT)  # nothing typed is lost
    assert selectors.comments_by_author(author_id=str(alice.pk)) == []  # nothing posted
    if javascript:  # axe runs as a script in the page
        assert axe_violations(page) == []

    page.get_by_role("button", name="Post").click()

    expect(page.locator(".messages")).to_have_text("Posted.")
    card = page.locator("article.comment").first
    expect(card.locator(".body strong")).to_have_text("Night shift")
    expect(card.locator(".body em")).to_have_text("early")
    expect(card.locator(".body code")).to_have_text("coffee()")
    expect(card.locator(".body a.mention")).to_have_attribute("href", "/u/bob/")
    link = card.locator(".body a", has_text="https://example.org/rota")
    expect(link).to_have_attribute("rel", "nofollow ugc noopener")
    expect(card.locator(".body")).to_contain_text("<b>not bold</b>")  # raw HTML shows as typed
    expect(page.locator(".compose-preview")).to_have_count(0)
    expect(page.get_by_label("What's on your mind")).to_have_value("")
    assert [comment.body for comment in selectors.comments_by_author(author_id=str(alice.pk))] == [TEXT]
    assert pages.console_errors == []
