"""What people do on the site, in Chromium: sign up, post, like and unlike (with JavaScript
and without), reply, watch the badge and the counts move on an open page, read the inbox,
and staff sending a delivery and watching its progress."""

from __future__ import annotations

import re

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.urls import reverse
from playwright.sync_api import expect

from actions.comments import comment_create
from actions.likes import like_add
from notifications import selectors as notification_selectors
from social import selectors as social_selectors
from tests.browser.conftest import axe_violations

PASSWORD = "correct-Horse-battery-9"


def uid(user) -> str:
    return str(user.pk)


def post(author, body: str) -> str:
    return comment_create(author_id=uid(author), body=body).comment_id


def like_button(page, comment_id: str):
    return page.locator(f"#c-{comment_id} button.like")


def test_a_new_user_signs_up_posts_and_finds_the_post_on_the_timeline(pages):
    page = pages.open("/accounts/signup/")
    page.fill("input[name=username]", "newcomer")
    page.fill("input[name=display_name]", "New Comer")
    page.fill("input[name=password1]", PASSWORD)
    page.fill("input[name=password2]", PASSWORD)
    page.get_by_role("button", name=re.compile("create account", re.I)).click()

    expect(page).to_have_url(re.compile(r"/$"))
    expect(page.get_by_text("Welcome, New Comer!")).to_be_visible()
    page.get_by_label(re.compile("on your mind", re.I)).fill("Hello from a real browser")
    page.get_by_role("button", name="Post").click()

    expect(page.locator("article.comment").first).to_contain_text("Hello from a real browser")
    assert get_user_model().objects.filter(username="newcomer").exists()
    assert axe_violations(page) == []
    assert pages.console_errors == []


def test_a_person_logs_in_with_the_form_and_out_again(pages, make_user):
    make_user("alice", display_name="Alice", password=PASSWORD)
    page = pages.open("/accounts/login/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", PASSWORD)
    page.get_by_role("button", name=re.compile("log in", re.I)).click()

    expect(page.get_by_role("button", name="Log out")).to_be_visible()
    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("link", name="Log in").first).to_be_visible()


def test_like_and_unlike_with_javascript_update_in_place(pages, make_user):
    alice, bob = make_user("alice"), make_user("bob")
    comment = post(alice, "Like me")
    page = pages.open("/", user=bob)
    page.evaluate("() => { window.stillTheSamePage = true; }")
    button = like_button(page, comment)

    button.click()

    expect(button).to_have_attribute("aria-pressed", "true")
    expect(button.locator(".count")).to_have_text("1")
    assert page.evaluate("() => window.stillTheSamePage") is True  # no reload
    assert social_selectors.like_state(comment_id=comment, user_id=uid(bob)) == (1, True)

    button.click()

    expect(button).to_have_attribute("aria-pressed", "false")
    expect(button.locator(".count")).to_have_text("0")
    assert social_selectors.like_state(comment_id=comment, user_id=uid(bob)) == (0, False)
    assert pages.console_errors == []


def test_like_and_unlike_without_javascript_post_the_form(pages, make_user):
    alice, bob = make_user("alice"), make_user("bob")
    comment = post(alice, "Like me without scripts")
    page = pages.open("/", user=bob, javascript=False)

    like_button(page, comment).click()

    expect(like_button(page, comment)).to_have_attribute("aria-pressed", "true")
    expect(like_button(page, comment).locator(".count")).to_have_text("1")
    assert social_selectors.like_state(comment_id=comment, user_id=uid(bob)) == (1, True)

    like_button(page, comment).click()

    expect(like_button(page, comment)).to_have_attribute("aria-pressed", "false")
    assert social_selectors.like_state(comment_id=comment, user_id=uid(bob)) == (0, False)


def test_a_reply_shows_under_the_comment_and_in_the_authors_inbox(pages, make_user):
    alice, bob = make_user("alice", display_name="Alice"), make_user("bob", display_name="Bob")
    comment = post(alice, "What do you think?")
    page = pages.open(f"/c/{comment}/", user=bob)

    page.get_by_label("Reply").fill("I think it works")
    page.get_by_role("button", name="Reply").click()

    expect(page.locator(".replies article.comment")).to_contain_text("I think it works")
    inbox = pages.open("/notifications/", user=alice)
    expect(inbox.locator("article.notification").first).to_contain_text("Bob")
    expect(inbox.locator("article.notification").first).to_contain_text("I think it works")


def test_the_badge_and_the_like_counts_follow_on_an_open_page(pages, make_user):
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    comment = post(alice, "Watch this count")
    other = post(alice, "And this one")
    page = pages.open("/", user=alice)
    badge = page.locator("[data-unread-badge]")
    expect(badge).to_be_hidden()

    like_add(comment_id=comment, user_id=uid(bob))  # elsewhere, while alice's page stays open

    expect(badge).to_be_visible()
    expect(badge).to_have_text(re.compile(r"^1\b"))
    expect(like_button(page, comment).locator(".count")).to_have_text("1")

    like_add(comment_id=comment, user_id=uid(carol))

    expect(like_button(page, comment).locator(".count")).to_have_text("2")
    expect(badge).to_have_text(re.compile(r"^1\b"))  # one notification, of two likes

    like_add(comment_id=other, user_id=uid(carol))

    expect(badge).to_have_text(re.compile(r"^2\b"))
    expect(page.locator("#live-status")).to_have_text("2 unread notifications")


def test_anonymous_pages_follow_like_counts_too(pages, make_user):
    alice, bob = make_user("alice"), make_user("bob")
    comment = post(alice, "Counted in public")
    page = pages.open(f"/c/{comment}/")

    like_add(comment_id=comment, user_id=uid(bob))

    expect(page.locator(f'[data-like-count="{comment}"]').first).to_have_text("1")


def test_the_inbox_marks_what_it_shows_read_and_the_badge_follows(pages, make_user):
    alice, bob = make_user("alice", display_name="Alice"), make_user("bob", display_name="Bob")
    liked, replied = post(alice, "first"), post(alice, "second")
    like_add(comment_id=liked, user_id=uid(bob))
    comment_create(author_id=uid(bob), body="A reply", parent_id=replied)
    assert notification_selectors.unread_count(user_id=uid(alice)) == 2

    page = pages.open("/notifications/", user=alice)

    expect(page.locator("article.notification")).to_have_count(2)
    expect(page.locator("[data-unread-badge]")).to_be_hidden()
    expect(page.get_by_role("button", name="Mark all as read")).to_be_disabled()
    expect(page.get_by_text("Nothing unread: everything here is read.")).to_be_visible()
    assert notification_selectors.unread_count(user_id=uid(alice)) == 0
    page.reload()
    expect(page.locator("article.notification.unread")).to_have_count(0)
    expect(page.locator("article.notification .when").first).to_contain_text(re.compile(r"· read \w"))
    assert axe_violations(page) == []
    assert pages.console_errors == []


@pytest.mark.slow
def test_staff_send_a_delivery_and_watch_it_finish(pages, make_user):
    staff = make_user("boss", is_staff=True)
    staff.is_superuser = True
    staff.save()
    bob, carol = make_user("bob"), make_user("carol")
    page = pages.open(reverse("admin:dynamo-delivery-create"), user=staff)

    page.fill("input[name=title]", "Maintenance tonight")
    page.fill("textarea[name=body]", "The site is down from 22:00 to 22:15.")
    page.get_by_label("A list of usernames").check()
    page.fill("textarea[name=usernames]", "bob\ncarol")
    page.get_by_role("button", name="Create delivery").click()
    expect(page.get_by_text("Maintenance tonight").first).to_be_visible()
    detail_url = page.url

    def row(label: str):
        return page.locator("tr", has=page.locator(f"th:text-is('{label}')")).locator("td")

    expect(row("Status")).not_to_have_text("done")
    call_command("dispatch_deliveries", "--no-progress")  # what the background dispatcher runs

    expect(row("Status")).to_have_text("done")  # the page refreshes by itself
    expect(row("Delivered")).to_have_text("2")
    assert page.url == detail_url
    for person in (bob, carol):
        inbox = pages.open("/notifications/", user=person)
        expect(inbox.locator("article.notification").first).to_contain_text("Maintenance tonight")
