"""Reactions in Chromium: a person reacts and takes it back, with JavaScript (in place, no page
load) and without (the forms), someone else sees the counts, and the author is told in their inbox."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from actions.comments import comment_create
from social.reactions.selectors import reaction_state
from tests.browser.conftest import axe_violations


def reaction_button(page, comment_id: str, name: str):
    return page.locator(f"#c-{comment_id} button.reaction[data-reaction={name}]")


def test_react_and_take_back_with_javascript_in_place(pages, make_user, fold_likes):
    alice, bob = make_user("alice", display_name="Alice"), make_user("bob", display_name="Bob")
    comment_id = comment_create(author_id=str(alice.pk), body="Party at mine").comment_id
    page = pages.open("/", user=bob)
    hooray = reaction_button(page, comment_id, "hooray")
    expect(hooray).to_have_attribute("aria-pressed", "false")
    page.evaluate("window.loadedOnce = true")  # gone if the page is loaded again

    hooray.click()
    expect(hooray).to_have_attribute("aria-pressed", "true")
    expect(hooray.locator(".count")).to_have_text("1")
    reaction_button(page, comment_id, "eyes").click()
    expect(reaction_button(page, comment_id, "eyes")).to_have_attribute("aria-pressed", "true")
    assert page.evaluate("window.loadedOnce") is True  # done in place
    assert reaction_state(comment_id=comment_id, user_id=str(bob.pk)).mine == ("hooray", "eyes")

    hooray.click()
    expect(hooray).to_have_attribute("aria-pressed", "false")
    expect(hooray.locator(".count")).to_have_text("")
    assert reaction_state(comment_id=comment_id, user_id=str(bob.pk)).mine == ("eyes",)
    page.reload()
    expect(reaction_button(page, comment_id, "eyes")).to_have_attribute("aria-pressed", "true")
    expect(reaction_button(page, comment_id, "hooray")).to_have_attribute("aria-pressed", "false")
    assert axe_violations(page) == []
    assert pages.console_errors == []

    visitor = pages.open(f"/c/{comment_id}/")
    expect(visitor.locator(f"#c-{comment_id} .reaction-static[data-reaction=eyes]")).to_contain_text("1")
    expect(visitor.locator(f"#c-{comment_id} button.reaction")).to_have_count(0)

    # The author is told once, with what is left: Bob's 👀 (his 🎉 was taken back).
    fold_likes()  # what the folder does within its poll, whatever the requests folded
    inbox = pages.open("/notifications/", user=alice)
    told = inbox.locator("article.notification")
    expect(told).to_have_count(1)
    expect(told.first).to_contain_text("Bob reacted to your comment 👀")
    expect(told.first).to_contain_text("Party at mine")
    told.first.get_by_role("link").click()
    expect(inbox).to_have_url(re.compile(rf"/c/{comment_id}/$"))
    assert pages.console_errors == []


def test_react_and_take_back_without_javascript(pages, make_user):
    alice, bob = make_user("alice", display_name="Alice"), make_user("bob", display_name="Bob")
    comment_id = comment_create(author_id=str(alice.pk), body="Plain forms").comment_id
    page = pages.open(f"/c/{comment_id}/", user=bob, javascript=False)
    heart = reaction_button(page, comment_id, "heart")

    heart.click()
    expect(page).to_have_url(re.compile(rf"/c/{comment_id}/#c-{comment_id}$"))
    heart = reaction_button(page, comment_id, "heart")
    expect(heart).to_have_attribute("aria-pressed", "true")
    expect(heart.locator(".count")).to_have_text("1")

    heart.click()
    expect(reaction_button(page, comment_id, "heart")).to_have_attribute("aria-pressed", "false")
    assert reaction_state(comment_id=comment_id, user_id=str(bob.pk)).mine == ()
