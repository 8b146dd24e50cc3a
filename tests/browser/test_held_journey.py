"""Held for review, in Chromium: a new account posts a link from the timeline's box and lands on
its comment's page marked "waiting for review"; another person sees nothing of it; staff approve
it with one click in the admin queue (then everyone sees it) and reject another (then it is gone)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from social.models import HeldComment, ModerationAction
from tests.browser.conftest import PHONE, axe_violations, horizontal_overflow

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_author_waits_for_review_and_staff_approve_and_reject(pages, make_user, settings):
    settings.HOLD_FOR_REVIEW_ENABLED = True
    author = make_user("newbie", display_name="Newbie")
    reader = make_user("reader", display_name="Reader")
    staff = make_user("mod", display_name="Mod", is_staff=True)
    staff.is_superuser = True
    staff.save(update_fields=["is_superuser"])

    page = pages.open("/", user=author, viewport=PHONE)
    for text in ("Our rota is at https://rota.example.org/december", "Cheap pills at https://spam.example/buy"):
        page.goto("/")
        page.get_by_label(re.compile("What.s on your mind")).fill(text)
        page.get_by_role("button", name=re.compile("^Post$")).click()
        expect(page.get_by_role("heading", level=1)).to_have_text("Your comment is waiting for review")
        expect(page.locator("[data-waiting]")).to_have_text("waiting for review")
        expect(page.locator("main")).to_contain_text(text.split(" at ")[0])
    assert horizontal_overflow(page) == 0
    assert axe_violations(page) == []
    keep, drop = (row.comment_id for row in HeldComment.objects.order_by("held_at"))

    other = pages.open("/", user=reader)
    expect(other.locator("main")).not_to_contain_text("rota.example.org")
    expect(other.locator("main")).not_to_contain_text("spam.example")
    assert other.goto(f"/c/{keep}/").status == 404

    admin = pages.open("/admin/social/heldcomment/", user=staff)
    expect(admin.locator("#result_list")).to_contain_text("rota.example.org/december")
    expect(admin.locator("#result_list")).to_contain_text("new_account_link")
    admin.locator(f'[data-approve="{keep}"]').click()
    expect(admin.locator(".messagelist")).to_contain_text("1 comment approved")
    admin.locator(f'[data-reject="{drop}"]').click()
    expect(admin.locator(".messagelist")).to_contain_text("1 comment rejected")
    expect(admin.locator("body")).not_to_contain_text("spam.example")

    other.goto("/")
    expect(other.locator("main")).to_contain_text("rota.example.org/december")
    assert other.goto(f"/c/{drop}/").status == 404
    actions = sorted(ModerationAction.objects.filter(source="admin").values_list("action", flat=True))
    assert actions == ["approve", "reject"]


def test_the_author_deletes_their_comment_while_it_waits_and_staff_no_longer_see_it(pages, make_user, settings):
    settings.HOLD_FOR_REVIEW_ENABLED = True
    author = make_user("newbie", display_name="Newbie")
    staff = make_user("mod", display_name="Mod", is_staff=True)
    staff.is_superuser = True
    staff.save(update_fields=["is_superuser"])

    page = pages.open("/", user=author, viewport=PHONE)
    page.get_by_label(re.compile("What.s on your mind")).fill("Oops, a wrong link https://typo.example.org/x")
    page.get_by_role("button", name=re.compile("^Post$")).click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Your comment is waiting for review")
    page.get_by_role("link", name="Delete it").click()
    expect(page.locator("main")).to_contain_text("nobody else has seen it")
    assert axe_violations(page) == []
    page.get_by_role("button", name="Delete").click()
    expect(page.locator("body")).to_contain_text("Your comment was deleted.")
    assert not HeldComment.objects.exists()

    admin = pages.open("/admin/social/heldcomment/", user=staff)
    expect(admin.locator("body")).not_to_contain_text("typo.example.org")
