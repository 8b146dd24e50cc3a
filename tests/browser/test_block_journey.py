"""Journey in Chromium at phone width (390 px): Ann blocks Bob from his profile, his earlier
reply leaves her view of her thread, Bob's reply from a page opened before the block is refused
with the clear message (his text kept), the page then tells him instead of offering a form, and
Ann unblocks him from the list in her settings. Each page on the way passes axe-core and fits the window. The same
forms work without JavaScript (tests/social/test_relations.py)."""

from __future__ import annotations

from playwright.sync_api import expect

from actions.comments import comment_create
from social.relations.selectors import relation_get
from tests.browser.conftest import PHONE, axe_violations, horizontal_overflow


def checked(page, problems: list[str], name: str) -> None:
    problems += [f"{name}: {finding}" for finding in axe_violations(page)]
    if horizontal_overflow(page) > 0:
        problems.append(f"{name}: wider than the window")


def test_block_from_a_profile_the_reply_refused_then_unblock_from_the_settings(pages, make_user):
    ann, bob = make_user("ann", display_name="Ann"), make_user("bob", display_name="Bob")
    mine = comment_create(author_id=str(ann.pk), body="Night shifts: how do you sleep after?").comment_id
    comment_create(author_id=str(bob.pk), body="Earlier jab from Bob", parent_id=mine)
    problems: list[str] = []
    theirs = pages.open(f"/c/{mine}/", user=bob, viewport=PHONE)  # open before the block

    page = pages.open("/u/bob/", user=ann, viewport=PHONE)
    checked(page, problems, "profile")
    page.get_by_role("button", name="Block", exact=True).click()
    expect(page.get_by_text("Blocked bob: they can no longer reply to your comments")).to_be_visible()
    expect(page.get_by_role("button", name="Unblock")).to_be_visible()
    checked(page, problems, "blocked")
    assert relation_get(user_id=str(ann.pk), other_id=str(bob.pk)).blocked

    page.goto(f"/c/{mine}/")
    expect(page.locator("main")).to_contain_text("Night shifts")
    expect(page.locator("main")).not_to_contain_text("Earlier jab from Bob")

    theirs.get_by_label("Reply").fill("You can't avoid me")
    theirs.get_by_role("button", name="Reply").click()
    expect(theirs.get_by_text("You can't reply to this comment: its author has blocked you.")).to_be_visible()
    expect(theirs.get_by_label("Reply")).to_have_value("You can't avoid me")  # the text is kept
    checked(theirs, problems, "refused")
    theirs.goto(f"/c/{mine}/")
    expect(theirs.get_by_text("You can't reply to this comment: its author has blocked you.")).to_be_visible()
    expect(theirs.get_by_label("Reply")).to_have_count(0)
    checked(theirs, problems, "told")

    page.goto("/me/settings/")
    page.get_by_role("link", name="Blocked and muted people").click()
    blocked = page.locator("section", has=page.get_by_role("heading", name="Blocked"))
    expect(blocked).to_contain_text("Bob (@bob)")
    checked(page, problems, "list")
    blocked.get_by_role("button", name="Unblock").click()
    expect(page.get_by_text("Unblocked bob")).to_be_visible()
    expect(page.locator("section", has=page.get_by_role("heading", name="Blocked"))).to_contain_text(
        "You blocked nobody."
    )
    checked(page, problems, "unblocked")
    assert not relation_get(user_id=str(ann.pk), other_id=str(bob.pk)).blocked

    theirs.goto(f"/c/{mine}/")
    theirs.get_by_label("Reply").fill("You can't avoid me")
    theirs.get_by_role("button", name="Reply").click()  # now allowed
    expect(theirs.get_by_text("Your reply is posted.")).to_be_visible()
    assert problems == []
    # The refused reply's page is a 403, which the console reports as a failed load; nothing else.
    assert [error for error in pages.console_errors if "status of 403" not in error] == []
