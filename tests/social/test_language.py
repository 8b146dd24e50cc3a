"""A person's language and time zone: the API, the settings page, the switcher, Accept-Language,
and texts already in the inbox worded in the reader's language when read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.core import mail
from django.urls import reverse

from notifications.mail.verification import email_verification_send
from project.clock import ManualClock, clock_override
from tests.notifications.mail_helpers import email_on, mailed, reply_to, schedule, send_due, verified

pytestmark = pytest.mark.django_db


def test_api_me_sets_and_answers_the_language_and_time_zone(make_user, api):
    alice = make_user("alice")
    as_alice = api.as_user(alice)
    answer = as_alice.patch("/api/me/", {"locale": "ja", "time_zone": "Asia/Tokyo", "quiet_start": 22}, format="json")
    assert answer.status_code == 200, answer.content
    body = as_alice.get("/api/me/").json()
    assert (body["locale"], body["time_zone"], body["quiet_start"], body["quiet_end"]) == ("ja", "Asia/Tokyo", 22, None)
    for payload, field in (
        ({"locale": "xx"}, "locale"),
        ({"locale": 3}, "locale"),
        ({"time_zone": "Mars/Olympus"}, "time_zone"),
        ({"time_zone": "../../etc/passwd"}, "time_zone"),
        ({"time_zone": "+09:00"}, "time_zone"),
        ({"quiet_end": 24}, "quiet_end"),
        ({"digest_hour": True}, "digest_hour"),
        ({}, "non_field_errors"),
    ):
        refused = as_alice.patch("/api/me/", payload, format="json")
        assert refused.status_code == 400 and field in refused.json(), (payload, refused.content)
    alice.refresh_from_db()
    assert (alice.locale, alice.time_zone) == ("ja", "Asia/Tokyo")  # nothing refused was written
    assert as_alice.patch("/api/me/", {"locale": "", "time_zone": ""}, format="json").json()["locale"] == ""


def test_anonymous_visitors_get_their_browsers_language_and_english_by_default(client):
    assert "Timeline" in client.get("/", HTTP_ACCEPT_LANGUAGE="fr").content.decode()
    japanese = client.get("/", HTTP_ACCEPT_LANGUAGE="ja,en;q=0.5")
    assert "タイムライン" in japanese.content.decode() and '<html lang="ja">' in japanese.content.decode()
    assert "Oś czasu" in client.get("/", HTTP_ACCEPT_LANGUAGE="pl-PL").content.decode()


def test_the_switcher_remembers_the_choice_and_a_persons_setting_wins(client, make_user):
    page = client.get("/", HTTP_ACCEPT_LANGUAGE="ja")
    assert 'method="get" action="/language/"' in page.content.decode()  # a visitor's: no CSRF cookie
    answer = client.get("/language/", {"language": "pl", "next": "/popular/"}, HTTP_ACCEPT_LANGUAGE="ja")
    assert answer.status_code == 302 and answer["Location"] == "/popular/"
    assert "Oś czasu" in client.get("/", HTTP_ACCEPT_LANGUAGE="ja").content.decode()
    assert client.get("/language/", {"language": "pl", "next": "https://evil.example/"})["Location"] == "/"
    alice = make_user("alice")
    client.force_login(alice)
    client.get("/language/", {"language": "ja", "next": "/"})
    alice.refresh_from_db()
    assert alice.locale == ""  # a GET changes no setting: only the cookie
    assert 'method="post" action="/language/"' in client.get("/").content.decode()
    client.post("/language/", {"language": "ja", "next": "/"})
    alice.refresh_from_db()
    assert alice.locale == "ja"  # saved for mails too
    client.cookies.pop("django_language", None)
    assert "タイムライン" in client.get("/", HTTP_ACCEPT_LANGUAGE="pl").content.decode()


def test_the_settings_page_sets_language_time_zone_and_quiet_hours(client, make_user):
    alice = make_user("alice")
    client.force_login(alice)
    form = {"action": "language", "locale": "pl", "time_zone": "Europe/Warsaw", "quiet_start": "22", "quiet_end": "7"}
    saved = client.post("/me/settings/", form, follow=True)
    assert "Zapisano ustawienia języka i czasu." in saved.content.decode()
    alice.refresh_from_db()
    assert (alice.locale, alice.time_zone, alice.quiet_start, alice.quiet_end) == ("pl", "Europe/Warsaw", 22, 7)
    refused = client.post("/me/settings/", {**form, "time_zone": "Nowhere/Else"})
    assert refused.status_code == 200 and "IANA" in refused.content.decode()


def test_texts_already_in_the_inbox_follow_the_readers_language(client, make_user):
    alice, bob = make_user("alice", display_name="Alice"), make_user("bob", display_name="Bob")
    reply_to(alice, bob)
    client.force_login(alice)
    assert "Bob replied to your comment" in client.get("/notifications/").content.decode()
    alice.locale = "ja"
    alice.save()
    assert "Bobさんがあなたのコメントに返信しました" in client.get("/notifications/").content.decode()
    alice.locale = "pl"
    alice.save()
    assert "Bob odpowiada na Twój komentarz" in client.get("/notifications/").content.decode()


def test_a_mail_is_in_the_recipients_language_not_the_senders(make_user, settings):
    settings.SITE_URL = "https://social.example"
    alice = verified(make_user("alice", display_name="Alice"))
    alice.locale = "pl"
    alice.save()
    bob = make_user("bob", display_name="Bob")
    bob.locale = "ja"
    bob.save()
    email_on(alice, "reply")
    reply_to(alice, bob, "Dobre pytanie")
    schedule(alice)
    assert send_due().get("sent") == 1
    (message,) = mail.outbox
    assert message.subject == "\u201cBob\u201d odpowiada na Twój komentarz"
    assert "Cześć, Alice!" in message.body and "Wyłącz te wiadomości:" in message.body
    assert "Bob odpowiada na Twój komentarz" in message.alternatives[0][0]


@pytest.mark.parametrize(
    ("locale", "zone", "ago"),
    [
        ("ja", "Asia/Tokyo", "3分前"),
        ("pl", "America/New_York", "3\u00a0minuty temu"),
        ("en", "", "3\u00a0minutes ago"),
    ],
)
def test_times_on_pages_are_the_viewers_local_time_and_relative_times_translated(client, make_user, locale, zone, ago):
    alice, bob = make_user("alice", display_name="Alice"), make_user("bob", display_name="Bob")
    alice.locale, alice.time_zone = locale, zone
    alice.save()
    written = datetime.now(UTC) - timedelta(minutes=3)
    with clock_override(ManualClock(written.timestamp())):
        reply_to(alice, bob)
    client.force_login(alice)
    page = client.get("/notifications/").content.decode()
    assert ago in page, page[page.find("<time") : page.find("</time>")]
    local = written.astimezone(ZoneInfo(zone or "UTC")).strftime("%Y-%m-%d %H:%M")
    assert local in page  # the exact time in the title, in the viewer's zone


def test_account_mails_are_in_the_account_owners_language(client, make_user, settings):
    settings.SITE_URL = "https://social.example"
    ola = make_user("ola")
    ola.locale, ola.email = "pl", "ola@example.com"
    ola.save()
    email_verification_send(user=ola)
    (verify,) = mailed()  # worded when the worker sends it
    assert verify.subject == "Potwierdź swój adres e-mail w Dynamo Social" and "Kliknij ten link" in verify.body
    ola.email_verified = True
    ola.save()
    # Asked for from a Japanese browser: the mail is in the owner's language all the same.
    client.post(reverse("password_reset"), {"email": "ola@example.com"}, HTTP_ACCEPT_LANGUAGE="ja")
    reset = mailed()[-1]
    assert reset.subject == "Zresetuj hasło do Dynamo Social" and "Każdy link działa raz" in reset.body


def test_a_token_client_reads_its_notifications_in_its_persons_language(make_user, api):
    ola, bob = make_user("ola", display_name="Ola"), make_user("bob", display_name="Bob")
    ola.locale, ola.time_zone = "pl", "Asia/Tokyo"
    ola.save()
    reply_to(ola, bob)
    answer = api.as_user(ola).get("/api/notifications/", HTTP_ACCEPT_LANGUAGE="en")
    (entry,) = answer.json()["results"]
    assert entry["text"] == "Bob odpowiada na Twój komentarz"
    assert entry["updated_at"].endswith("+09:00")  # times in the person's zone
