"""/me/notifications/ on a phone (390 px): every checkbox a 24 px target with a visible label,
column headers whole words, the digest's radios beside their labels, no empty header cell, and
axe's target-size rule passes (checked in Chromium; the page works without JavaScript too)."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.browser.conftest import ARTIFACTS, DESKTOP, PHONE, axe_violations, horizontal_overflow

MIN_TARGET = 24


def test_the_notification_settings_read_and_work_on_a_phone(pages, make_user):
    bob = make_user("bob", display_name="Bob")
    page = pages.open("/me/notifications/", user=bob, viewport=PHONE)
    expect(page.get_by_role("heading", name="Notification settings")).to_be_visible()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "preferences-phone.png"), full_page=True)
    problems: list[str] = []

    for box in page.locator("form.notification-preferences input[type=checkbox]").all():
        size = box.bounding_box()
        name = box.get_attribute("id")
        if size is None or size["width"] < MIN_TARGET or size["height"] < MIN_TARGET:
            problems.append(f"checkbox {name} is {size} (under {MIN_TARGET} px)")
        label = page.locator(f"label[for='{name}']")
        shown = label.bounding_box()
        if shown is None or shown["width"] < 8 or not label.inner_text().strip():
            problems.append(f"checkbox {name} has no visible label")

    broken = page.evaluate(
        """() => Array.from(document.querySelectorAll('.notification-preferences :is(th, caption)')).flatMap(cell => {
            const found = [];
            const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
            for (let text = walker.nextNode(); text; text = walker.nextNode()) {
                const re = /\\S+/g;
                let match;
                while ((match = re.exec(text.data))) {
                    const range = document.createRange();
                    range.setStart(text, match.index);
                    range.setEnd(text, match.index + match[0].length);
                    const lines = new Set(Array.from(range.getClientRects()).map(rect => Math.round(rect.top)));
                    if (lines.size > 1) found.push(match[0]);
                }
            }
            return found;
        })"""
    )
    problems += [f"header word broken across lines: {word}" for word in broken]
    empty = page.evaluate(
        "() => Array.from(document.querySelectorAll('th')).filter(cell => !cell.textContent.trim()).length"
    )
    if empty:
        problems.append(f"{empty} empty header cell(s)")

    for radio in page.locator("input[type=radio][name=digest]").all():
        mark = radio.bounding_box()
        label = page.locator(f"label[for='{radio.get_attribute('id')}']").bounding_box()
        assert mark is not None and label is not None
        beside = abs((mark["y"] + mark["height"] / 2) - (label["y"] + label["height"] / 2)) <= 12
        inside = label["x"] <= mark["x"] and mark["x"] + mark["width"] <= label["x"] + label["width"]
        near = inside or 0 <= label["x"] - (mark["x"] + mark["width"]) <= 24
        if not (beside and near):
            problems.append(f"digest radio {radio.get_attribute('value')} apart from its label: {mark} {label}")
        if mark["width"] < MIN_TARGET or mark["height"] < MIN_TARGET:
            problems.append(f"digest radio {radio.get_attribute('value')} is {mark}")

    problems += [f"axe: {finding}" for finding in axe_violations(page)]
    problems += [f"axe: {finding}" for finding in axe_violations(page, rules=["target-size"])]
    if horizontal_overflow(page) > 0:
        problems.append("wider than the window")
    assert problems == []

    page.get_by_label("Likes of your comments: Inbox").uncheck()
    page.get_by_label("Daily").check()
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Saved: your notification settings.")).to_be_visible()
    expect(page.get_by_label("Likes of your comments: Inbox")).not_to_be_checked()
    assert pages.console_errors == []


def test_on_a_desktop_the_settings_stay_a_table_with_its_column_headers(pages, make_user):
    bob = make_user("bob", display_name="Bob")
    page = pages.open("/me/notifications/", user=bob, viewport=DESKTOP)
    page.screenshot(path=str(ARTIFACTS / "preferences-desktop.png"), full_page=True)
    headers = page.locator(".preferences-grid thead th")
    expect(headers.nth(1)).to_be_visible()
    assert [text.strip() for text in headers.all_inner_texts()][:3] == ["Kind", "Inbox", "E-mail"]
    box = page.get_by_label("Likes of your comments: Inbox").bounding_box()
    assert box is not None and box["width"] >= MIN_TARGET and box["height"] >= MIN_TARGET
    assert axe_violations(page, rules=["target-size"]) == []
