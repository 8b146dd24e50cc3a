"""Reporting, in Chromium: a person reports a comment from its page on a phone-sized window,
staff find it in the admin queue with its reason and hide it; the comment is gone for others."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from actions.comments import comment_create
from social.models import ModerationAction
from tests.browser.conftest import PHONE, axe_violations, horizontal_overflow

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_report_reaches_the_queue_and_staff_hide_the_comment(pages, make_user):
    author = make_user("troll", display_name="Troll")
    reader = make_user("reader", display_name="Reader")
    staff = make_user("mod", display_name="Mod", is_staff=True)
    staff.is_superuser = True
    staff.save(update_fields=["is_superuser"])
    comment = comment_create(author_id=str(author.pk), body="Buy cheap pills at example.test").comment_id

    page = pages.open(f"/c/{comment}/", user=reader, viewport=PHONE)
    page.get_by_role("link", name=re.compile("^Report")).click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Report this comment")
    assert horizontal_overflow(page) == 0
    assert axe_violations(page) == []
    page.get_by_label("Spam or advertising").check()
    page.get_by_label(re.compile("Anything the moderators should know")).fill("Third time today")
    page.get_by_role("button", name="Send report").click()
    expect(page).to_have_url(re.compile(f"/c/{comment}/$"))
    expect(page.get_by_text("your report was sent to the moderators")).to_be_visible()
    # Coming back to the form says it is done, once.
    page.goto(f"/c/{comment}/report/")
    expect(page.locator("main .card[role=status]")).to_contain_text("You reported this comment")

    admin = pages.open("/admin/dynamo/reports/", user=staff)
    row = admin.locator("#report-queue tbody tr").first
    expect(row).to_contain_text("Buy cheap pills")
    expect(row).to_contain_text("Spam or advertising: 1")
    row.get_by_role("link", name=comment).click()
    expect(admin.locator("body")).to_contain_text("Third time today")
    admin.get_by_label("Note for the audit log (optional)").fill("spam, hidden")
    admin.get_by_role("button", name="Hide").click()
    expect(admin.get_by_role("heading", level=2)).to_have_text("Hide this comment from everyone but its author?")
    admin.get_by_role("button", name="Yes, hide").click()
    expect(admin.locator(".messagelist")).to_contain_text("The comment is hidden.")
    expect(admin.locator("body")).to_contain_text("hidden by staff")

    assert page.goto(f"/c/{comment}/").status == 404  # gone for the reader (and everyone but its author)
    [line] = ModerationAction.objects.all()
    assert (line.action, line.staff_username, line.detail, line.outcome) == ("hide", "mod", "spam, hidden", "done")
    assert [error for error in pages.console_errors if f"/c/{comment}/)" not in error] == []
