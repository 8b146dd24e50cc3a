"""Nothing a person does is lost in Chromium: a like pressed after the session ended is done
after the log-in, an unlike whose API call fails is still an unlike, text typed before the
session ended (or beside a failed like) is back in its box with a message, and a like while
offline says so on the page and leaves it as it was."""

from __future__ import annotations

import re

from django.contrib.sessions.models import Session
from playwright.sync_api import expect

from actions.comments import comment_create
from actions.likes import like_add
from social import selectors
from tests.browser.conftest import PHONE, axe_violations

PASSWORD = "pw-Secret-123"  # make_user's


def post(author, body: str) -> str:
    return comment_create(author_id=str(author.pk), body=body).comment_id


def like_button(page, comment_id: str):
    return page.locator(f"#c-{comment_id} button.like")


def end_every_session() -> None:
    """What logging out in another tab or an expired session does: the cookie points nowhere."""
    Session.objects.all().delete()


def log_in_with_the_form(page, username: str) -> None:
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.get_by_role("button", name=re.compile("log in", re.I)).last.click()


def test_a_like_after_the_session_ended_is_done_after_logging_in_and_the_reply_box_is_kept(pages, make_user):
    alice, bob = make_user("alice", display_name="Alice"), make_user("bob")
    comment = post(alice, "Like me after logging in")
    page = pages.open(f"/c/{comment}/", user=bob)
    page.get_by_label("Reply").fill("Half a thought")
    end_every_session()

    like_button(page, comment).click()

    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    expect(page.get_by_text("Log in to like that comment")).to_be_visible()
    log_in_with_the_form(page, "bob")
    expect(page).to_have_url(re.compile(rf"/c/{comment}/#c-{comment}$"))
    expect(page.get_by_text("You liked the comment.")).to_be_visible()
    expect(like_button(page, comment)).to_have_attribute("aria-pressed", "true")
    expect(page.get_by_label("Reply")).to_have_value("Half a thought")
    expect(page.get_by_text("Your unsent text is back in the box")).to_be_visible()
    assert selectors.like_state(comment_id=comment, user_id=str(bob.pk)) == (1, True)
    assert axe_violations(page) == []


def test_an_unlike_whose_api_call_fails_is_sent_as_an_unlike(pages, make_user):
    alice, bob = make_user("alice"), make_user("bob")
    comment = post(alice, "Unlike me")
    like_add(comment_id=comment, user_id=str(bob.pk))
    page = pages.open("/", user=bob)
    page.route("**/api/comments/*/like/", lambda route: route.fulfill(status=503, body="down"))

    like_button(page, comment).click()

    expect(like_button(page, comment)).to_have_attribute("aria-pressed", "false")
    expect(like_button(page, comment).locator(".count")).to_have_text("0")
    assert selectors.like_state(comment_id=comment, user_id=str(bob.pk)) == (0, False)


def test_a_post_sent_after_the_session_ended_is_back_in_the_box_after_logging_in(pages, make_user):
    make_user("alice", display_name="Alice")
    page = pages.open("/", user=make_user("bob"))
    page.get_by_label(re.compile("on your mind", re.I)).fill("Written while the session ended")
    end_every_session()

    page.get_by_role("button", name="Post").click()

    expect(page.get_by_text("your text will be back in the box")).to_be_visible()
    log_in_with_the_form(page, "bob")
    expect(page.get_by_label(re.compile("on your mind", re.I))).to_have_value("Written while the session ended")
    expect(page.get_by_text("It is back in the box: press Post")).to_be_visible()


def test_a_like_while_offline_says_so_and_leaves_the_page_as_it_was(pages, make_user):
    alice, bob = make_user("alice"), make_user("bob")
    comment = post(alice, "Offline like")
    page = pages.open("/", user=bob)
    page.evaluate("() => { window.stillTheSamePage = true; }")
    page.get_by_label(re.compile("on your mind", re.I)).fill("Do not lose me")
    page.context.set_offline(True)

    like_button(page, comment).click()

    expect(page.locator(f"#c-{comment} [role=alert]")).to_contain_text("no connection")
    expect(like_button(page, comment)).to_have_attribute("aria-pressed", "false")
    assert page.evaluate("() => window.stillTheSamePage") is True
    expect(page.get_by_label(re.compile("on your mind", re.I))).to_have_value("Do not lose me")

    page.context.set_offline(False)
    like_button(page, comment).click()
    expect(like_button(page, comment)).to_have_attribute("aria-pressed", "true")
    expect(page.locator(f"#c-{comment} [role=alert]")).to_have_count(0)


def test_a_pasted_text_over_the_limit_is_counted_and_not_cut(pages, make_user):
    page = pages.open("/", user=make_user("bob"), viewport=PHONE)
    box = page.get_by_label(re.compile("on your mind", re.I))

    box.fill("x" * 5000)

    expect(page.locator(".counter")).to_have_text("5,000 / 2,000 characters")
    expect(page.get_by_role("alert")).to_contain_text("Too long by 3,000 characters")
    page.get_by_role("button", name="Post").click()
    expect(box).to_be_focused()
    assert len(box.input_value()) == 5000
    box.fill("x" * 2000)
    expect(page.get_by_role("alert")).to_have_count(0)
    expect(page.locator(".counter")).to_have_text("2,000 / 2,000 characters")


def test_logging_out_forgets_the_unsent_text_this_tab_kept(pages, make_user):
    """Text kept for a person (a like that fell back to the form) must not greet whoever logs
    in next in the same tab."""
    alice = make_user("alice")
    page = pages.open("/", user=alice)
    page.evaluate("sessionStorage.setItem('draft:/', 'private words'); sessionStorage.setItem('other', 'kept')")
    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("link", name=re.compile("log in", re.I)).first).to_be_visible()
    assert page.evaluate("[sessionStorage.getItem('draft:/'), sessionStorage.getItem('other')]") == [None, "kept"]


def test_a_cross_site_form_neither_logs_the_person_out_nor_plants_text(pages, make_user):
    """Another site's form posting to the timeline arrives without the SameSite=Lax cookies:
    it is refused, and keeps nothing (keeping it would start a new session whose cookie
    replaces the person's, logging them out)."""
    make_user("bob")
    page = pages.open("/accounts/login/?next=/")
    log_in_with_the_form(page, "bob")
    expect(page.get_by_role("button", name="Log out")).to_be_visible()
    evil = (
        f'<form method="post" action="{pages.site}/"><input name="body" value="Planted words">'
        '<button type="submit">Win a prize</button></form>'
    )
    page.route("http://evil.example/**", lambda route: route.fulfill(status=200, content_type="text/html", body=evil))
    page.goto("http://evil.example/")

    page.get_by_role("button", name="Win a prize").click()

    expect(page.get_by_role("heading", name="That form was out of date")).to_be_visible()
    expect(page.get_by_text("Your text is kept")).to_have_count(0)
    page.goto(f"{pages.site}/")
    expect(page.get_by_role("button", name="Log out")).to_be_visible()
    expect(page.get_by_label(re.compile("on your mind", re.I))).to_have_value("")


def test_a_like_kept_while_logged_out_is_not_done_for_the_next_person_logging_in(pages, make_user):
    """A like pressed after the session ended, and the presser walks away: someone else
    logging in in that browser (going elsewhere) and following a link to the like's address likes nothing."""
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    comment = post(alice, "Pressed by a passer-by")
    page = pages.open(f"/c/{comment}/", user=bob)
    end_every_session()
    like_button(page, comment).click()
    expect(page.get_by_text("Log in to like that comment")).to_be_visible()

    page.goto("/accounts/login/")
    log_in_with_the_form(page, "carol")
    expect(page.get_by_role("button", name="Log out")).to_be_visible()
    page.goto(f"/c/{comment}/like/")

    expect(page.get_by_text("Nothing was changed")).to_be_visible()
    expect(like_button(page, comment)).to_have_attribute("aria-pressed", "false")
    assert selectors.like_state(comment_id=comment, user_id=str(carol.pk)) == (0, False)
