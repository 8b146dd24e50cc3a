"""A person reads the site in Japanese, then in Polish: the switcher at the foot of every page,
the settings page's language, the inbox's texts (worded when read, with the language's plural
forms) and the settings page in each language. Screenshots under var/browser/languages/."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from actions.comments import comment_create
from actions.likes import like_add
from tests.browser.conftest import ARTIFACTS, DESKTOP, PHONE, axe_violations, horizontal_overflow

SHOTS = ARTIFACTS / "languages"


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390px", "1280px"])
def test_reading_the_inbox_and_settings_in_japanese_then_polish(pages, make_user, viewport):
    ola = make_user("ola", display_name="Ola")
    bob = make_user("bob", display_name="Bob")
    comment = comment_create(author_id=str(ola.pk), body="Kto idzie na konferencję?").comment_id
    comment_create(author_id=str(bob.pk), body="Ja!", parent_id=comment)
    for number in range(5):
        liker = make_user(f"liker{number}", display_name=f"Liker {number}")
        like_add(comment_id=comment, user_id=str(liker.pk))
    problems: list[str] = []
    width = viewport["width"]

    page = pages.open("/me/settings/", user=ola, viewport=viewport)
    page.locator("#id_locale").select_option("ja")
    page.locator("#id_time_zone").fill("Asia/Tokyo")
    page.get_by_role("button", name="Save language and time").click()
    expect(page.get_by_text("言語と時刻の設定を保存しました。")).to_be_visible()
    expect(page.locator("html")).to_have_attribute("lang", "ja")
    expect(page.get_by_role("heading", name="言語と時刻")).to_be_visible()
    shot(page, f"settings-ja-{width}")
    problems += [f"settings ja: {finding}" for finding in axe_violations(page)]

    page.goto("/notifications/")
    expect(page.get_by_role("heading", name="通知")).to_be_visible()
    expect(page.get_by_text("Bobさんがあなたのコメントに返信しました")).to_be_visible()
    # Likes fold in the background: the text appears once the fold ran (the inbox shows arrivals).
    shot(page, f"inbox-ja-{width}")
    problems += [f"inbox ja: {finding}" for finding in axe_violations(page)]

    page.locator("#language-switcher").select_option("pl")
    page.get_by_role("button", name="変更").click()
    expect(page.get_by_role("heading", name="Powiadomienia")).to_be_visible()
    expect(page.locator("html")).to_have_attribute("lang", "pl")
    expect(page.get_by_text("Bob odpowiada na Twój komentarz")).to_be_visible()
    shot(page, f"inbox-pl-{width}")
    problems += [f"inbox pl: {finding}" for finding in axe_violations(page)]

    page.get_by_role("link", name="Ustawienia", exact=True).first.click()
    expect(page.get_by_role("heading", name="Język i czas")).to_be_visible()
    expect(page.locator("#id_locale")).to_have_value("pl")  # the switcher saved it for mails too
    shot(page, f"settings-pl-{width}")
    problems += [f"settings pl: {finding}" for finding in axe_violations(page)]
    if horizontal_overflow(page) > 0:
        problems.append("settings pl: wider than the window")
    assert problems == []
    assert pages.console_errors == []
