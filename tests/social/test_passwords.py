"""Password change and reset by e-mail: Django's views on the site's pages, links that work
once and expire, and the same answer whether or not an account has the address."""

import re
from datetime import timedelta
from unittest import mock

import pytest
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.core import mail
from django.test import Client

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a-fresh-Passw0rd"


@pytest.fixture
def alice(make_user):
    user = make_user("alice", display_name="Alice")
    user.email = "alice@example.com"
    user.save()
    return user


def reset_link() -> str:
    [message] = mail.outbox
    found = re.search(r"https?://[^/\s]+(/accounts/password/reset/\S+/)", str(message.body))
    assert found is not None, message.body
    return found.group(1)


def test_change_password_keeps_the_session_and_the_new_one_works(alice):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    form = browser.get("/accounts/password/change/")
    assert form.status_code == 200 and "Change your password" in form.content.decode()
    token = form.context["csrf_token"]
    wrong = browser.post(
        "/accounts/password/change/",
        {
            "old_password": "nope",
            "new_password1": NEW_PASSWORD,
            "new_password2": NEW_PASSWORD,
            "csrfmiddlewaretoken": token,
        },
    )
    assert wrong.status_code == 200 and "errorlist" in wrong.content.decode()
    done = browser.post(
        "/accounts/password/change/",
        {
            "old_password": "pw-Secret-123",
            "new_password1": NEW_PASSWORD,
            "new_password2": NEW_PASSWORD,
            "csrfmiddlewaretoken": token,
        },
        follow=True,
    )
    assert "Password changed" in done.content.decode()
    assert browser.get("/me/settings/").status_code == 200  # still signed in
    alice.refresh_from_db()
    assert alice.check_password(NEW_PASSWORD)


def test_change_password_needs_a_log_in(client):
    assert client.get("/accounts/password/change/")["Location"].startswith("/accounts/login/")


def test_reset_answers_the_same_whether_or_not_the_address_has_an_account(alice, client):
    known = client.post("/accounts/password/reset/", {"email": "ALICE@example.com"})
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["alice@example.com"]
    unknown = client.post("/accounts/password/reset/", {"email": "nobody@example.com"})
    assert len(mail.outbox) == 1
    assert (known.status_code, known["Location"]) == (unknown.status_code, unknown["Location"])
    assert known["Location"] == "/accounts/password/reset/sent/"
    page = client.get(known["Location"]).content.decode()
    assert "If an account has that address" in page


def test_the_reset_link_is_on_the_site_url_whatever_host_the_request_named(alice, client, settings):
    """A forged Host header (one the site answers to, on any port) cannot send the owner a
    reset link that leads elsewhere: the link is built from SITE_URL."""
    settings.SITE_URL = "https://social.example.org"
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "attacker.example"]
    client.post("/accounts/password/reset/", {"email": "alice@example.com"}, HTTP_HOST="attacker.example:8443")
    [message] = mail.outbox
    assert "https://social.example.org/accounts/password/reset/" in message.body
    assert "attacker.example" not in message.body and "8443" not in message.body


def test_the_reset_mail_leaves_after_the_answer(alice):
    """Sending takes an SMTP round trip only for an address with an account: done before the
    answer, it would tell which addresses have one. It is sent once the answer is out."""
    from django.core.signals import request_finished
    from django.test import RequestFactory

    from project.after_response import AfterResponseMiddleware
    from social.views import PasswordResetView

    view = AfterResponseMiddleware(PasswordResetView.as_view())
    request = RequestFactory().post("/accounts/password/reset/", {"email": "alice@example.com"})
    request._dont_enforce_csrf_checks = True
    answer = view(request)
    assert answer.status_code == 302 and mail.outbox == []
    request_finished.send(sender=None)  # what the server sends once the answer is written
    assert [message.to for message in mail.outbox] == [["alice@example.com"]]


def test_a_reset_link_sets_a_new_password_once(alice, client):
    client.post("/accounts/password/reset/", {"email": "alice@example.com"})
    link = reset_link()
    form_page = client.get(link, follow=True)
    assert "Choose a new password" in form_page.content.decode()
    form_url = form_page.redirect_chain[-1][0]
    done = client.post(form_url, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD}, follow=True)
    assert "Your new password is set" in done.content.decode()
    alice.refresh_from_db()
    assert alice.check_password(NEW_PASSWORD)
    again = Client().get(link, follow=True).content.decode()
    assert "This link no longer works" in again


def test_a_reset_link_expires(alice, client, settings):
    settings.PASSWORD_RESET_TIMEOUT = 600
    client.post("/accounts/password/reset/", {"email": "alice@example.com"})
    link = reset_link()
    later = PasswordResetTokenGenerator()._now() + timedelta(seconds=601)
    with mock.patch.object(PasswordResetTokenGenerator, "_now", return_value=later):
        page = client.get(link, follow=True).content.decode()
    assert "This link no longer works" in page
    alice.refresh_from_db()
    assert alice.check_password("pw-Secret-123")


def test_the_log_in_page_offers_the_reset(client):
    assert 'href="/accounts/password/reset/"' in client.get("/accounts/login/").content.decode()


def test_sign_up_takes_an_optional_email(client, api, django_user_model):
    answer = client.post(
        "/accounts/signup/",
        {
            "username": "zoe",
            "display_name": "Zoe",
            "email": "zoe@example.com",
            "password1": NEW_PASSWORD,
            "password2": NEW_PASSWORD,
        },
    )
    assert answer.status_code == 302
    assert django_user_model.objects.get(username="zoe").email == "zoe@example.com"
    made = api.post("/api/users/", {"username": "yan", "password": NEW_PASSWORD}, format="json")
    assert made.status_code == 201 and django_user_model.objects.get(username="yan").email == ""
    bad = api.post(
        "/api/users/", {"username": "xi", "password": NEW_PASSWORD, "email": "not-an-address"}, format="json"
    )
    assert bad.status_code == 400 and "email" in bad.json()


def test_reset_mails_are_limited_per_address_and_per_email(alice, client, settings):
    settings.RATE_LIMITS_ENABLED = True
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "password_reset": ("2/hour", "")}
    for _ in range(2):
        assert client.post("/accounts/password/reset/", {"email": "alice@example.com"}).status_code == 302
    refused = client.post("/accounts/password/reset/", {"email": "alice@example.com"})
    assert refused.status_code == 429 and "Too many reset e-mails" in refused.content.decode()
    # From another address, the same e-mail address is still limited; unknown ones are
    # counted the same way, so the limit says nothing about which addresses have accounts.
    elsewhere = Client(REMOTE_ADDR="198.51.100.7")
    assert elsewhere.post("/accounts/password/reset/", {"email": "alice@example.com"}).status_code == 429
    assert elsewhere.post("/accounts/password/reset/", {"email": "nobody@example.com"}).status_code == 302
    assert len(mail.outbox) == 2
