"""A mention, in Chromium: Bob names @ALICE in a reply, Alice finds "Bob mentioned you" in her
inbox, follows it to the reply, and the name there is a link to her profile."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from actions.comments import comment_create
from tests.browser.conftest import axe_violations

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_mention_reaches_the_inbox_and_links_to_the_profile(pages, make_user):
    alice = make_user("alice", display_name="Alice")
    bob = make_user("bob", display_name="Bob")
    carol = make_user("carol", display_name="Carol")
    comment = comment_create(author_id=str(carol.pk), body="Who knows this drug's interactions?").comment_id

    page = pages.open(f"/c/{comment}/", user=bob)
    page.get_by_label("Reply").fill("Ask @ALICE, she wrote the <b>guide</b>.")
    page.get_by_role("button", name="Reply").click()
    reply = page.locator(".replies article.comment").first
    expect(reply).to_contain_text("Ask @ALICE, she wrote the <b>guide</b>.")  # shown as typed, escaped
    expect(reply.locator("a.mention")).to_have_attribute("href", "/u/alice/")

    inbox = pages.open("/notifications/", user=alice)
    card = inbox.locator("article.notification").first
    expect(card).to_contain_text("Bob mentioned you")
    expect(card).to_contain_text("Ask @ALICE")
    assert axe_violations(inbox) == []
    card.get_by_role("link", name="Bob mentioned you").click()

    expect(inbox).to_have_url(re.compile(f"/c/{comment}/#c-"))
    mention = inbox.locator(".replies a.mention", has_text="@ALICE")
    expect(mention).to_be_visible()
    mention.click()
    expect(inbox.get_by_role("heading", level=1)).to_contain_text("Alice")
    assert pages.console_errors == []
