"""The inbox page says one thing: once it has marked what it shows read, no card says "New"
beside "Nothing unread", and the button and its note follow the header badge. Notifications
arriving while it is open are offered ("Show 1 new notification") and shown on top without
reloading the page."""

from __future__ import annotations

from playwright.sync_api import expect

from actions.comments import comment_create
from actions.likes import like_add
from notifications import selectors as notification_selectors
from tests.browser.conftest import axe_violations


def uid(user) -> str:
    return str(user.pk)


def settled(page) -> None:
    """The page has marked what it shows read (its note says so)."""
    expect(page.get_by_text("Nothing unread: everything here is read.")).to_be_visible()


def test_what_the_inbox_says_matches_its_cards_and_the_badge(pages, make_user):
    alice, bob = make_user("alice"), make_user("bob", display_name="Bob")
    liked = comment_create(author_id=uid(alice), body="first").comment_id
    replied = comment_create(author_id=uid(alice), body="second").comment_id
    like_add(comment_id=liked, user_id=uid(bob))
    comment_create(author_id=uid(bob), body="A reply", parent_id=replied)

    page = pages.open("/notifications/", user=alice)

    settled(page)
    expect(page.get_by_role("button", name="Mark all as read")).to_be_disabled()
    expect(page.locator("[data-unread-badge]")).to_be_hidden()
    labels = page.locator("article.notification .new")
    expect(labels).to_have_count(2)
    assert labels.all_inner_texts() == ["New, now read", "New, now read"]  # never a bare "New" beside the note
    assert notification_selectors.unread_count(user_id=uid(alice)) == 0
    assert pages.console_errors == []


def test_new_notifications_are_offered_and_shown_without_a_reload(pages, make_user):
    alice, bob = make_user("alice"), make_user("bob", display_name="Bob")
    first = comment_create(author_id=uid(alice), body="first").comment_id
    second = comment_create(author_id=uid(alice), body="second").comment_id
    like_add(comment_id=first, user_id=uid(bob))
    page = pages.open("/notifications/", user=alice)
    settled(page)
    page.evaluate("window.stillThisPage = true")  # gone if the page reloads

    comment_create(author_id=uid(bob), body="Arrived while you read", parent_id=second)  # elsewhere

    show = page.get_by_role("button", name="Show 1 new notification")
    expect(show).to_be_visible()
    # Until asked, the page tells the truth without moving: the badge counts it, the button may mark it.
    expect(page.locator("[data-unread-badge]")).to_have_text("1 unread")
    expect(page.get_by_role("button", name="Mark all as read")).to_be_enabled()
    expect(page.get_by_text("Nothing unread: everything here is read.")).to_be_hidden()
    expect(page.locator("article.notification")).to_have_count(1)
    page.screenshot(path="/tmp/b_inbox_offer.png")

    show.click()

    cards = page.locator("article.notification")
    expect(cards).to_have_count(2)
    expect(cards.first).to_contain_text("Arrived while you read")
    expect(cards.first).to_be_focused()
    expect(cards.first.locator(".new")).to_have_text("New, now read")
    settled(page)
    expect(page.locator("[data-unread-badge]")).to_be_hidden()
    expect(show).to_be_hidden()
    assert page.evaluate("window.stillThisPage") is True
    assert notification_selectors.unread_count(user_id=uid(alice)) == 0
    page.screenshot(path="/tmp/b_inbox_shown.png")
    assert axe_violations(page) == []
    assert pages.console_errors == []


def test_a_poll_asked_before_the_marking_does_not_bring_the_old_count_back(pages, make_user):
    """The badge poll and the inbox's mark-read cross: the poll, asked first, answers last with
    the count from before the marking. Held here by routing both requests."""
    alice, bob = make_user("alice"), make_user("bob")
    comment = comment_create(author_id=uid(alice), body="first").comment_id
    like_add(comment_id=comment, user_id=uid(bob))
    held: dict[str, list] = {"read": [], "live": []}
    page = pages.open(None, user=alice)
    page.route("**/api/notifications/read/", lambda route: held["read"].append(route))
    page.route("**/api/live/**", lambda route: held["live"].append(route))
    page.goto("/notifications/")
    while not (held["read"] and held["live"]):  # both asked, neither answered
        page.wait_for_timeout(100)

    held["read"][0].continue_()
    page.get_by_text("Nothing unread: everything here is read.").wait_for()
    held["live"][0].fulfill(json={"unread_count": 1, "like_counts": {}, "liked": {}})  # read before the marking
    while len(held["live"]) < 2:  # the next poll is asked once the stale answer was handled
        page.wait_for_timeout(100)

    expect(page.locator("[data-unread-badge]")).to_be_hidden()
    expect(page.get_by_role("button", name="Mark all as read")).to_be_disabled()
    page.unroute("**/api/live/**")


def test_every_arrival_updates_the_offer(pages, make_user):
    """Each arrival updates the offer: one shown, the next is offered again ("Show 1 new
    notification", not a badge that goes up alone); one arriving while the page fetches the
    last makes it "Show 2 new notifications"."""
    alice, bob = make_user("alice"), make_user("bob", display_name="Bob")
    parents = [comment_create(author_id=uid(alice), body=f"mine {n}").comment_id for n in range(5)]
    like_add(comment_id=parents[0], user_id=uid(bob))
    page = pages.open("/notifications/", user=alice)
    settled(page)

    comment_create(author_id=uid(bob), body="One arrived", parent_id=parents[1])
    page.get_by_role("button", name="Show 1 new notification").click()
    settled(page)
    comment_create(author_id=uid(bob), body="The next arrived", parent_id=parents[2])
    expect(page.locator("[data-unread-badge]")).to_have_text("1 unread")
    page.get_by_role("button", name="Show 1 new notification").click()
    expect(page.locator("article.notification").first).to_contain_text("The next arrived")
    settled(page)

    held: list = []
    page.route("**/notifications/", lambda route: held.append(route))  # the page's fetch of its first page
    comment_create(author_id=uid(bob), body="Another", parent_id=parents[3])
    while not held:  # the page fetches what the count says is new...
        page.wait_for_timeout(100)
    comment_create(author_id=uid(bob), body="And one more", parent_id=parents[4])  # ...and more arrives meanwhile
    expect(page.locator("[data-unread-badge]")).to_have_text("2 unread")
    held[0].continue_()
    page.unroute("**/notifications/")
    show = page.get_by_role("button", name="Show 2 new notifications")
    expect(show).to_be_visible()
    show.click()
    expect(page.locator("article.notification")).to_have_count(5)
    settled(page)
    assert pages.console_errors == []
