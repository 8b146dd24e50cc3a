"""The post box in Chromium: its counter counts as the server does (a line break is one
character, an emoji is one), and Back after posting shows an empty box that cannot post the
same text twice."""

from __future__ import annotations

from playwright.sync_api import expect

from social import selectors

TEXT = "😀" + "\n".join(["a" * 99] * 20)  # 1 + 1,980 + 19 line breaks = 2,000 characters


def bodies_of(user) -> list[str]:
    return [comment.body for comment in selectors.comments_by_author(author_id=str(user.pk))]


def test_the_counter_and_the_server_count_alike(pages, make_user):
    alice = make_user("alice")
    page = pages.open("/", user=alice)
    box = page.get_by_label("What's on your mind")
    box.fill(TEXT)
    expect(page.locator(".counter")).to_have_text("2,000 / 2,000 characters")
    expect(page.locator(".counter-error")).to_be_empty()
    expect(page.get_by_text("a line break counts as one")).to_be_visible()

    page.get_by_role("button", name="Post").click()

    expect(page.locator(".messages")).to_have_text("Posted.")
    assert bodies_of(alice) == [TEXT]
    box = page.get_by_label("What's on your mind")
    box.fill(TEXT + "b")
    expect(page.locator(".counter-error")).to_have_text("Too long by 1 characters: shorten it to 2,000 to post it.")
    assert pages.console_errors == []


def test_back_after_posting_shows_an_empty_box_and_posts_nothing_twice(pages, make_user):
    alice = make_user("alice")
    page = pages.open("/", user=alice)
    page.get_by_label("What's on your mind").fill("Posted once\nonly")
    page.get_by_role("button", name="Post").click()
    expect(page.locator(".messages")).to_have_text("Posted.")

    page.go_back()

    box = page.get_by_label("What's on your mind")
    expect(box).to_have_value("")
    expect(page.locator(".counter")).to_have_text("0 / 2,000 characters")
    expect(page.get_by_role("button", name="Post")).to_have_text("Post")
    page.screenshot(path="/tmp/b_back_after_post.png")
    page.get_by_role("button", name="Post").click()  # an empty box posts nothing
    page.goto("/")
    assert bodies_of(alice) == ["Posted once\nonly"]
    assert pages.console_errors == []


def test_unsent_text_is_kept_when_leaving_the_page(pages, make_user):
    alice = make_user("alice")
    page = pages.open("/", user=alice)
    page.get_by_label("What's on your mind").fill("Half written")
    page.get_by_role("link", name="Popular").click()
    page.wait_for_url("**/popular/")
    page.go_back()
    expect(page.get_by_label("What's on your mind")).to_have_value("Half written")
    assert bodies_of(alice) == []


def test_a_page_the_browser_kept_comes_back_without_the_posted_text(pages, make_user):
    """The browser's back/forward cache keeps a page as it was left: the box still holding the
    text just posted. (Playwright's Chromium keeps no such pages, so its `pageshow` is sent by
    hand onto a page holding the posted text, as a kept page would.)"""
    alice = make_user("alice")
    page = pages.open("/", user=alice)
    box = page.get_by_label("What's on your mind")
    box.fill("Kept by the browser")
    page.get_by_role("button", name="Post").click()
    expect(page.locator(".messages")).to_have_text("Posted.")
    page.go_back()
    key = page.locator("input[name=idempotency_key]").input_value()

    page.evaluate("""() => {
      document.querySelector("textarea[name=body]").value = "Kept by the browser";
      window.dispatchEvent(new PageTransitionEvent("pageshow", { persisted: true }));
    }""")

    expect(box).to_have_value("")
    expect(page.locator(".counter")).to_have_text("0 / 2,000 characters")
    assert page.locator("input[name=idempotency_key]").input_value() == key
    box.fill("Not posted yet")  # text that was not posted stays
    page.evaluate("""() => window.dispatchEvent(new PageTransitionEvent("pageshow", { persisted: true }))""")
    expect(box).to_have_value("Not posted yet")
    expect(page.locator(".counter")).to_have_text("14 / 2,000 characters")
    assert bodies_of(alice) == ["Kept by the browser"]


def test_after_post_the_focus_is_on_what_says_it_was_posted(pages, make_user):
    """A keyboard or screen-reader user who pressed Post lands on "Posted." (focused, a status:
    announced), not at the top of a page that says nothing."""
    alice = make_user("alice")
    page = pages.open("/", user=alice)
    page.get_by_label("What's on your mind").fill("Posted with the keyboard")
    page.get_by_role("button", name="Post").focus()
    page.keyboard.press("Enter")
    expect(page.locator(".messages")).to_have_text("Posted.")
    focused = page.evaluate(
        "() => [document.activeElement.textContent.trim(), document.activeElement.getAttribute('role')]"
    )
    assert focused == ["Posted.", "status"]
    assert pages.console_errors == []
