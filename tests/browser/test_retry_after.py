"""A busy server's refusal is asked again after its Retry-After, in Chromium: a like answered
503 with `Retry-After: 1` is sent again a second later and done in place (no fall-back to the
plain form, nothing reloaded); a refusal whose wait is too long for a person to sit through
falls back to the form at once, as every other failure does."""

from __future__ import annotations

from playwright.sync_api import expect

from actions.comments import comment_create
from social import selectors


def like_button(page, comment_id: str):
    return page.locator(f"#c-{comment_id} button.like")


def test_a_like_refused_as_busy_is_sent_again_after_retry_after(pages, make_user):
    alice, bob = make_user("alice"), make_user("bob")
    comment = comment_create(author_id=str(alice.pk), body="Busy server").comment_id
    page = pages.open("/", user=bob)
    page.evaluate("() => { window.stillTheSamePage = true; }")
    asked = []

    def busy_once(route):
        asked.append(route.request.method)
        if len(asked) == 1:
            route.fulfill(status=503, headers={"Retry-After": "1"}, json={"code": "overloaded"})
        else:
            route.continue_()

    page.route("**/api/comments/*/like/", busy_once)

    like_button(page, comment).click()

    expect(like_button(page, comment)).to_have_attribute("aria-pressed", "true")
    assert asked == ["PUT", "PUT"]
    assert page.evaluate("() => window.stillTheSamePage") is True
    assert selectors.like_state(comment_id=comment, user_id=str(bob.pk)) == (1, True)


def test_a_refusal_asking_for_a_long_wait_falls_back_to_the_form(pages, make_user):
    alice, bob = make_user("alice"), make_user("bob")
    comment = comment_create(author_id=str(alice.pk), body="Throttled").comment_id
    page = pages.open("/", user=bob)
    asked = []

    def throttled(route):
        asked.append(route.request.method)
        route.fulfill(status=429, headers={"Retry-After": "3600"}, json={"code": "throttled"})

    page.route("**/api/comments/*/like/", throttled)

    like_button(page, comment).click()

    expect(like_button(page, comment)).to_have_attribute("aria-pressed", "true")  # the plain form did it
    assert asked == ["PUT"]
