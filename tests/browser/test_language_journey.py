"""A person reads the site in Japanese, then in Polish: the switcher at the foot of every page,
the settings page's language, the timeline, a comment's page, the notification settings, the
inbox's texts (worded when read, with the language's plural forms) and the settings page in each
language. Screenshots under var/browser/languages/."""

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

    page.goto("/")
    expect(page.get_by_label("Olaさん、いまどうしてる")).to_be_visible()
    expect(page.get_by_role("button", name="投稿", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name="タイムライン")).to_be_visible()
    shot(page, f"timeline-ja-{width}")
    problems += [f"timeline ja: {finding}" for finding in axe_violations(page)]

    page.goto(f"/c/{comment}/")
    expect(page.get_by_role("heading", name="返信", exact=True)).to_be_visible()
    expect(page.get_by_text("このスレッドであなたのコメントへの返信が通知されます。")).to_be_visible()
    expect(page.get_by_role("button", name="ウォッチ", exact=True)).to_be_visible()
    expect(page.locator(".counter")).to_have_text("0 / 2,000 文字")  # the scripts' words too
    shot(page, f"comment-ja-{width}")
    problems += [f"comment ja: {finding}" for finding in axe_violations(page)]

    page.goto("/me/notifications/")
    expect(page.get_by_role("heading", name="通知設定", level=1)).to_be_visible()
    expect(page.get_by_text("何を、どこで受け取るか")).to_be_visible()
    expect(page.get_by_role("group", name="まとめメール")).to_be_visible()
    shot(page, f"preferences-ja-{width}")
    problems += [f"preferences ja: {finding}" for finding in axe_violations(page)]

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

    page.goto("/")
    expect(page.locator("html")).to_have_attribute("lang", "pl")
    expect(page.get_by_label("Co słychać, Ola?")).to_be_visible()
    expect(page.get_by_role("button", name="Opublikuj", exact=True)).to_be_visible()
    shot(page, f"timeline-pl-{width}")
    problems += [f"timeline pl: {finding}" for finding in axe_violations(page)]

    page.goto(f"/c/{comment}/")
    expect(page.get_by_role("heading", name="Odpowiedzi", exact=True)).to_be_visible()
    expect(page.get_by_role("button", name="Obserwuj", exact=True)).to_be_visible()
    expect(page.get_by_role("link", name="Ustawienia powiadomień")).to_be_visible()
    expect(page.locator(".counter")).to_have_text("0 / 2000 znaków")
    shot(page, f"comment-pl-{width}")
    problems += [f"comment pl: {finding}" for finding in axe_violations(page)]

    page.goto("/me/notifications/")
    expect(page.get_by_role("heading", name="Ustawienia powiadomień", level=1)).to_be_visible()
    expect(page.get_by_text("Co do Ciebie dociera i gdzie")).to_be_visible()
    expect(page.get_by_role("group", name="Podsumowanie e-mailem")).to_be_visible()
    expect(page.get_by_text("Push jest wyłączony w tej przeglądarce.")).to_be_visible()
    shot(page, f"preferences-pl-{width}")
    problems += [f"preferences pl: {finding}" for finding in axe_violations(page)]
    if horizontal_overflow(page) > 0:
        problems.append("preferences pl: wider than the window")
    assert problems == []
    assert pages.console_errors == []
