"""Staff in the admin's Comments list: a spam comment with one very long word keeps its Hide
button on screen, its id opens the comment, and hiding it says so."""

from __future__ import annotations

import re

from django.urls import reverse
from playwright.sync_api import expect

from actions.comments import comment_create
from tests.browser.conftest import DESKTOP, PHONE, axe_violations, horizontal_overflow

SPAM = "BUY" + "CHEAPWATCHES" * 166  # 1,995 characters, not one space


def test_a_long_word_wraps_and_the_spam_can_be_hidden(pages, make_user):
    staff = make_user("boss", is_staff=True)
    staff.is_superuser = True
    staff.save()
    spam = comment_create(author_id=str(make_user("spammer").pk), body=SPAM).comment_id
    comment_create(author_id=str(make_user("alice").pk), body="A normal comment")

    for viewport in (PHONE, DESKTOP):
        page = pages.open(reverse("admin:dynamo-comments"), user=staff, viewport=viewport)
        row = page.locator("tr", has=page.locator(f"a:has-text('{spam}')"))
        hide = row.get_by_role("button", name="Hide")
        box = hide.bounding_box()
        # On a desktop the whole row fits; a phone scrolls the six-column table inside its own
        # box (admin.js), a little, never by the word's length.
        reach = viewport["width"] if viewport is DESKTOP else viewport["width"] * 1.5
        assert box is not None and box["x"] + box["width"] <= reach, box
        assert horizontal_overflow(page) <= 0
        assert row.locator("td.text").last.bounding_box()["width"] < viewport["width"] * 0.6  # the word wraps
        page.screenshot(path=f"var/browser/screenshots/admin-comments-spam-{viewport['width']}.png", full_page=True)
        assert axe_violations(page) == []

    row.get_by_role("link", name=spam).click()
    expect(page).to_have_url(re.compile(rf"/c/{spam}/$"))
    page.go_back()

    page.locator("tr", has=page.locator(f"a:has-text('{spam}')")).get_by_role("button", name="Hide").click()
    page.get_by_role("button", name="Yes, hide").click()  # the confirmation page (works without JavaScript)

    expect(page.locator(".messagelist .success")).to_contain_text("is now hidden")


def test_the_admin_index_offers_to_add_a_delivery(pages, make_user):
    staff = make_user("boss", is_staff=True)
    page = pages.open(reverse("admin:index"), user=staff)

    page.locator("tr", has=page.get_by_role("link", name="Deliveries", exact=True)).get_by_role(
        "link", name="Add"
    ).click()

    expect(page).to_have_url(re.compile(re.escape(reverse("admin:dynamo-delivery-create")) + "$"))
