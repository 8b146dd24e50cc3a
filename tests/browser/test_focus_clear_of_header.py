"""The sticky header never covers the element that has the keyboard focus (WCAG 2.4.11), on a
phone and at 200% zoom, going down the page with Tab, back up with Shift+Tab, and right after
the skip link."""

from __future__ import annotations

import pytest

from actions.comments import comment_create
from tests.browser.conftest import PHONE

# 200% zoom of a 1280 x 900 window: half as many CSS pixels, each drawn twice as large.
ZOOM_200 = {"width": 640, "height": 450}

COVERED = """() => {
  const focused = document.activeElement;
  if (!focused || focused === document.body) return null;
  const header = document.querySelector(".site-header");
  if (header.contains(focused) || focused.classList.contains("skip-link")) return null;
  const box = focused.getBoundingClientRect(), bar = header.getBoundingClientRect();
  if (box.bottom <= 0 || box.top >= innerHeight) return null;  // off screen (a hidden control)
  const name = `${focused.tagName.toLowerCase()}#${focused.id}.${focused.className}`;
  return box.top < bar.bottom - 0.5 ? `${name} top ${box.top} under the header's bottom ${bar.bottom}` : null;
}"""


@pytest.fixture
def long_timeline(make_user):
    alice = make_user("alice", display_name="Alice Longname-Of-The-Valley")
    for number in range(12):
        comment_create(author_id=str(alice.pk), body=f"Comment number {number} with a few words in it")
    return alice


@pytest.mark.parametrize("viewport", [PHONE, ZOOM_200], ids=["phone", "zoom-200"])
def test_tab_and_shift_tab_keep_the_focus_clear_of_the_header(pages, long_timeline, viewport):
    page = pages.open("/", user=long_timeline, viewport=viewport)
    page.wait_for_load_state("load")
    covered, scrolled = [], 0
    for key in ["Tab"] * 70 + ["Shift+Tab"] * 70:  # each comment has its like and six reactions to pass
        page.keyboard.press(key)
        found = page.evaluate(COVERED)
        if found:
            covered.append(f"{key}: {found}")
        scrolled = max(scrolled, page.evaluate("scrollY"))
    assert scrolled > 500, "the focus went down the page and back up"
    assert covered == []


@pytest.mark.parametrize("viewport", [PHONE, ZOOM_200], ids=["phone", "zoom-200"])
def test_the_skip_link_lands_clear_of_the_header(pages, long_timeline, viewport):
    page = pages.open("/", user=long_timeline, viewport=viewport)
    page.wait_for_load_state("load")
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip-link"
    page.keyboard.press("Enter")
    page.wait_for_function("document.activeElement && document.activeElement.id === 'main'")
    bar = page.locator(".site-header").bounding_box()
    main = page.locator("main").bounding_box()
    assert main["y"] >= bar["y"] + bar["height"] - 0.5
    page.keyboard.press("Tab")  # the first control of the page, the post box
    assert page.evaluate(COVERED) is None
    page.screenshot(path=f"/tmp/b_skip_{viewport['width']}.png")
