"""Journey in Chromium at phone width (390 px): a person downloads their data from the settings
page, then deletes their account at /me/delete/ (a wrong password first: refused, still signed
in), lands on the page saying what happens next, is signed out and cannot log in again; the
eraser then empties their comment. Each page on the way passes axe-core and fits the window.
The same requests without a browser: tests/social/test_account_delete.py, test_account_export.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

from django.core.management import call_command
from playwright.sync_api import expect

from actions.comments import comment_create
from social.models import AccountDeletion
from social.selectors import comment_find
from tests.browser.conftest import PHONE, axe_violations, horizontal_overflow

PASSWORD = "pw-Secret-123"  # make_user's


def checked(page, problems: list[str], name: str) -> None:
    problems += [f"{name}: {finding}" for finding in axe_violations(page)]
    if horizontal_overflow(page) > 0:
        problems.append(f"{name}: wider than the window")


def test_download_then_delete_with_the_password_then_the_eraser_empties_the_comment(
    pages, make_user, settings, tmp_path: Path
):
    ann = make_user("ann", display_name="Ann")
    mine = comment_create(author_id=str(ann.pk), body="Night shifts: how do you sleep after?").comment_id
    problems: list[str] = []

    page = pages.open("/me/settings/", user=ann, viewport=PHONE)
    checked(page, problems, "settings")
    with page.expect_download() as downloading:
        page.get_by_role("link", name="Download your data").click()
    download = downloading.value
    assert download.suggested_filename == "dynamo-social-ann.json"
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    document = json.loads(saved.read_text())
    assert document["profile"]["username"] == "ann"
    assert [(item["id"], item["body"]) for item in document["comments"]] == [
        (mine, "Night shifts: how do you sleep after?")
    ]

    page.get_by_role("link", name="Delete your account").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Delete your account")
    checked(page, problems, "delete")
    page.get_by_label("Your password").fill("not-my-password")
    page.get_by_role("button", name="Delete my account").click()
    # Said where the page opens (on a phone the form is a screen further down), and at the field.
    refusal = page.locator("main [role=alert]")
    expect(refusal).to_have_text("Your account is not deleted. That is not your password.")
    expect(refusal).to_be_in_viewport()
    expect(page.locator(".field.has-error")).to_contain_text("That is not your password.")
    expect(page.get_by_role("button", name="Log out")).to_be_visible()  # still signed in
    checked(page, problems, "wrong-password")
    ann.refresh_from_db()
    assert ann.is_active and not AccountDeletion.objects.exists()

    page.get_by_label("Your password").fill(PASSWORD)
    page.get_by_role("button", name="Delete my account").click()
    expect(page.get_by_role("heading", level=1)).to_have_text("Your account is deleted")
    expect(page.locator("main [role=status]")).to_contain_text("You are logged out")
    expect(page.get_by_role("link", name="Log in").first).to_be_visible()
    checked(page, problems, "deleted")
    page.goto("/me/settings/")
    expect(page).to_have_url(re.compile(r"/accounts/login/"))  # signed out: settings ask to log in

    page.fill("input[name=username]", "ann")
    page.fill("input[name=password]", PASSWORD)
    page.get_by_role("button", name=re.compile("log in", re.I)).click()
    expect(page.locator("main")).to_contain_text("That username and password do not match an account")
    expect(page.get_by_role("button", name="Log out")).to_have_count(0)

    # Not due yet (ACCOUNT_DELETION_DELAY_SECONDS after the request): the eraser leaves it.
    call_command("erase_accounts")
    kept = comment_find(comment_id=mine)
    assert kept is not None and kept.body == "Night shifts: how do you sleep after?"
    settings.ACCOUNT_DELETION_DELAY_SECONDS = 0  # due now, as tests/social/test_account_delete.py makes it
    call_command("erase_accounts")
    erased = comment_find(comment_id=mine)
    assert erased is not None and erased.body == "" and erased.deleted_at
    assert AccountDeletion.objects.get(user_id=ann.pk).finished_at is not None
    assert problems == []
    # The deleted account's failed log-in answers 200 with its error: nothing in the console.
    assert pages.console_errors == []
