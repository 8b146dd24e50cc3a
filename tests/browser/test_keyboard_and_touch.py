"""The site by keyboard, by touch on a phone, with a screen reader's names, in dark mode, and
an open page keeping the viewer's own hearts current."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from actions.comments import comment_create
from actions.likes import like_add, like_remove
from tests.browser.conftest import DESKTOP, PHONE, axe_violations

# WCAG relative luminance and contrast, computed in the page from computed colours.
CONTRAST_JS = """([selector, against]) => {
  const parse = (value) => value.match(/[\\d.]+/g).slice(0, 3).map(Number);
  const lum = ([r, g, b]) => {
    const c = [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * c[0] + 0.7152 * c[1] + 0.0722 * c[2];
  };
  const ring = parse(getComputedStyle(document.querySelector(selector)).outlineColor);
  const back = parse(getComputedStyle(document.querySelector(against)).backgroundColor);
  const [hi, lo] = [lum(ring), lum(back)].sort((a, b) => b - a);
  return (hi + 0.05) / (lo + 0.05);
}"""


def post(author, body: str) -> str:
    return comment_create(author_id=str(author.pk), body=body).comment_id


def like_button(page, comment_id: str):
    return page.locator(f"#c-{comment_id} button.like")


def back_to_this_tab(page) -> None:
    """What the browser tells a tab the person comes back to (headless tabs never hide)."""
    page.evaluate("() => document.dispatchEvent(new Event('visibilitychange'))")


def test_enter_on_a_like_keeps_the_focus_on_the_button_and_its_ring_stands_out(pages, make_user):
    alice, bob = make_user("alice", display_name="Alice"), make_user("bob")
    comment = post(alice, "Keyboard like")
    page = pages.open("/", user=bob)
    button = like_button(page, comment)
    button.focus()

    page.keyboard.press("Enter")

    expect(button).to_have_attribute("aria-pressed", "true")
    expect(button).to_be_focused()
    page.keyboard.press("Enter")
    expect(button).to_have_attribute("aria-pressed", "false")
    expect(button).to_be_focused()
    assert page.evaluate(CONTRAST_JS, [f"#c-{comment} button.like", "body"]) >= 3


def test_buttons_and_links_say_whose_comment_they_act_on(pages, make_user):
    alice, bob = make_user("alice", display_name="Alice"), make_user("bob")
    post(alice, "Named for a screen reader")
    page = pages.open("/", user=bob)

    expect(page.get_by_role("button", name=re.compile(r"^Like Alice\u2019s comment, 0 likes$"))).to_be_visible()
    expect(page.get_by_role("link", name="Reply to Alice")).to_be_visible()


def test_a_skip_link_comes_first_and_the_header_marks_the_current_page(pages, make_user):
    page = pages.open("/popular/", user=make_user("bob", display_name="Bobby"), viewport=PHONE)

    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to content")
    expect(skip).to_be_focused()
    expect(skip).to_be_in_viewport()
    page.keyboard.press("Enter")
    expect(page.locator("main")).to_be_focused()
    expect(page.get_by_role("link", name="Popular")).to_have_attribute("aria-current", "page")
    expect(page.get_by_role("link", name="Timeline")).not_to_have_attribute("aria-current", "page")
    expect(page.get_by_text("Signed in as")).to_be_visible()  # on a phone too
    expect(page.get_by_text("Bobby")).to_be_visible()


def test_touch_targets_on_a_phone(pages, make_user):
    alice, bob = make_user("alice", display_name="Alice"), make_user("bob")
    post(alice, "Tap me")
    page = pages.open("/", user=bob, viewport=PHONE)

    heights = page.evaluate(
        """() => Array.from(document.querySelectorAll('a, button, textarea'))
             .filter((e) => e.getClientRects().length && !e.closest('.visually-hidden, .skip-link'))
             .map((e) => [e.matches('button.like, .post-form button, textarea') ? 'primary' : 'other',
                          e.textContent.trim().slice(0, 30), e.getBoundingClientRect().height])"""
    )
    assert [h for h in heights if h[0] == "primary" and h[2] < 44] == []
    assert [h for h in heights if h[2] < 24] == []
    assert len(heights) > 5


def test_the_hearts_follow_likes_made_in_another_tab(pages, make_user):
    alice, bob = make_user("alice"), make_user("bob")
    comment = post(alice, "Liked elsewhere")
    page = pages.open("/", user=bob)
    button = like_button(page, comment)
    expect(button).to_have_attribute("aria-pressed", "false")

    like_add(comment_id=comment, user_id=str(bob.pk))  # in the second tab
    back_to_this_tab(page)

    expect(button).to_have_attribute("aria-pressed", "true")
    expect(button).to_have_class(re.compile(r"\bliked\b"))
    expect(button.locator(".count")).to_have_text("1")
    expect(button).to_have_attribute("value", "unlike")

    like_remove(comment_id=comment, user_id=str(bob.pk))
    back_to_this_tab(page)

    expect(button).to_have_attribute("aria-pressed", "false")
    expect(button.locator(".heart")).to_have_text("♡")


def test_post_and_reply_say_posting_while_the_network_is_slow(pages, make_user):
    alice = make_user("alice")
    comment = post(alice, "Reply slowly")
    page = pages.open(f"/c/{comment}/", user=make_user("bob"))
    held = []
    page.route(
        re.compile(rf".*/c/{comment}/$"),
        lambda route: held.append(route) if route.request.method == "POST" else route.continue_(),
    )
    page.get_by_label("Reply").fill("On a slow network")

    # What the button shows while the answer is held is noted in the tab's storage (the page
    # is navigating, so it is read once the answer has come).
    page.evaluate(
        """() => { const b = document.querySelector('.post-form button[type=submit]');
             const note = () => sessionStorage.setItem('seen', b.textContent + '|' + b.getAttribute('aria-disabled'));
             new MutationObserver(note).observe(b, {childList: true, attributes: true, subtree: true}); }"""
    )

    page.get_by_role("button", name="Reply", exact=True).click(no_wait_after=True)

    for _ in range(200):  # the held request arrives (generous: a busy machine)
        if held:
            break
        page.wait_for_timeout(100)
    held[0].continue_()
    expect(page.get_by_text("Your reply is posted.")).to_be_visible()
    expect(page.locator(".replies article.comment")).to_contain_text("On a slow network")
    assert page.evaluate("() => sessionStorage.getItem('seen')") == "Posting…|true"


def test_dark_mode_follows_the_system_and_stays_readable(pages, make_user):
    alice, bob = make_user("alice"), make_user("bob")
    comment = post(alice, "In the dark")
    for viewport in (PHONE, DESKTOP):
        page = pages.open("", user=bob, viewport=viewport)
        page.emulate_media(color_scheme="dark")
        page.goto(f"/c/{comment}/")
        background = page.evaluate("() => getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(17, 19, 24)"
        assert axe_violations(page) == []
        page.screenshot(path=f"var/browser/screenshots/comment-dark-{viewport['width']}.png", full_page=True)


def test_your_activity_is_in_the_header_and_in_the_browsers_time_zone(pages, make_user):
    alice, bob = make_user("alice"), make_user("bob")
    like_add(comment_id=post(alice, "Liked at a local time"), user_id=str(bob.pk))
    page = pages.open("/", user=bob, timezone_id="Asia/Tokyo", viewport=PHONE)

    page.get_by_role("link", name="Your activity").click()

    expect(page.get_by_text("Times are in Asia/Tokyo")).to_be_visible()  # drawn again once, in the browser's zone
    expect(page.get_by_role("link", name="Your activity")).to_have_attribute("aria-current", "page")
    expect(page.locator(".activity-list li").first).to_contain_text(re.compile(r"You (liked|logged in)"))
    expect(page.get_by_text("You liked a comment.")).to_be_visible()
    assert axe_violations(page) == []


def test_the_heart_is_current_after_going_back(pages, make_user):
    alice, bob = make_user("alice"), make_user("bob")
    comment = post(alice, "Liked here, unliked there")
    page = pages.open("/", user=bob)
    like_button(page, comment).click()
    expect(like_button(page, comment)).to_have_attribute("aria-pressed", "true")
    page.locator(f"#c-{comment} a.when").click()
    expect(page).to_have_url(re.compile(rf"/c/{comment}/$"))
    like_button(page, comment).click()
    expect(like_button(page, comment)).to_have_attribute("aria-pressed", "false")

    page.go_back()

    expect(page).to_have_url(re.compile(r"/$"))
    expect(like_button(page, comment)).to_have_attribute("aria-pressed", "false")
    expect(like_button(page, comment).locator(".count")).to_have_text("0")
