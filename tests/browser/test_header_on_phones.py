"""The header on every page: a Settings link for a signed-in person (the page that leads to
notification settings, e-mail, two-factor, the export, deletion and the blocked list), and on
a phone a header that scrolls away instead of keeping a fifth of the screen."""

from __future__ import annotations

import pytest

from actions.comments import comment_create
from tests.browser.conftest import DESKTOP, PHONE


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["phone", "desktop"])
def test_settings_is_one_tap_from_every_page(pages, make_user, viewport):
    alice = make_user("alice")
    comment = comment_create(author_id=str(alice.pk), body="Hello").comment_id
    for path in ["/", f"/c/{comment}/", "/u/alice/", "/notifications/", "/me/activity/"]:
        page = pages.open(path, user=alice, viewport=viewport)
        link = page.get_by_role("navigation", name="Site").get_by_role("link", name="Settings")
        assert link.is_visible(), path
        page.screenshot(path=f"/tmp/header-{viewport['width']}.png")
        link.click()
        page.wait_for_url("**/me/settings/")
        for name in ["Notifications and e-mail", "Two-factor log-in", "Download your data", "Delete your account"]:
            assert page.get_by_role("link", name=name).is_visible(), name
        assert page.get_by_role("link", name="Blocked and muted people").is_visible()
        page.context.close()
    assert pages.console_errors == []


def test_the_header_takes_little_of_a_phone_screen(pages, make_user):
    alice = make_user("alice", display_name="Alice Longname-Of-The-Valley")
    for number in range(12):
        comment_create(author_id=str(alice.pk), body=f"Comment number {number} with a few words in it")
    page = pages.open("/", user=alice, viewport=PHONE)
    page.mouse.wheel(0, 900)
    page.wait_for_function("scrollY > 500")
    bar = page.locator(".site-header").bounding_box()
    assert bar["y"] + bar["height"] < 64, f"the header covers {bar['y'] + bar['height']} of 844 px"
    page.screenshot(path="/tmp/header-phone-scrolled.png")
