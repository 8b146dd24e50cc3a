"""Password change and reset by e-mail: Django's views on the site's pages, links that work
once and expire, and the same answer whether or not an account has the address."""

import re
from datetime import timedelta
from unittest import mock

import pytest
from django.contrib.auth.tokens import PasswordResetTokenGenerator
from django.test import Client

from social.reset_mail import WITHHELD_SUBJECT
from tests.notifications.mail_helpers import mailed

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "a-fresh-Passw0rd"


@pytest.fixture
def alice(make_user):
    user = make_user("alice", display_name="Alice")
    user.email, user.email_verified = "alice@example.com", True
    user.save()
    return user


def reset_link() -> str:
    [message] = mailed()
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
    assert len(mailed()) == 1 and mailed()[0].to == ["alice@example.com"]
    unknown = client.post("/accounts/password/reset/", {"email": "nobody@example.com"})
    assert len(mailed()) == 1
    assert (known.status_code, known["Location"]) == (unknown.status_code, unknown["Location"])
    assert known["Location"] == "/accounts/password/reset/sent/"
    page = client.get(known["Location"]).content.decode()
    assert "If an account has that address and verified it" in page


def test_the_reset_page_says_a_reset_reaches_a_verified_address_only(client):
    page = client.get("/accounts/password/reset/").content.decode()
    assert "A reset link goes only to an address you verified" in page


def test_an_unverified_address_gets_no_reset_mail_and_the_same_answer(alice, make_user, client):
    bob = make_user("bob")
    bob.email = "bob@example.com"  # typed at sign-up, its link never followed
    bob.save()
    unverified = client.post("/accounts/password/reset/", {"email": "bob@example.com"})
    unknown = client.post("/accounts/password/reset/", {"email": "nobody@example.com"})
    assert mailed() == []
    assert (unverified.status_code, unverified["Location"]) == (unknown.status_code, unknown["Location"])


def test_accounts_that_verified_one_address_get_one_mail_with_a_link_each(alice, make_user, client):
    other = make_user("alice-work")
    other.email, other.email_verified = "Alice@example.com", True
    other.save()
    client.post("/accounts/password/reset/", {"email": "alice@example.com"})
    [message] = mailed()
    assert "alice:" in message.body and "alice-work:" in message.body
    assert len(re.findall(r"/accounts/password/reset/\S+/", message.body)) == 2


def test_the_reset_link_is_on_the_site_url_whatever_host_the_request_named(alice, client, settings):
    """A forged Host header (one the site answers to, on any port) cannot send the owner a
    reset link that leads elsewhere: the link is built from SITE_URL."""
    settings.SITE_URL = "https://social.example.org"
    settings.ALLOWED_HOSTS = [*settings.ALLOWED_HOSTS, "attacker.example"]
    client.post("/accounts/password/reset/", {"email": "alice@example.com"}, HTTP_HOST="attacker.example:8443")
    [message] = mailed()
    assert "https://social.example.org/accounts/password/reset/" in message.body
    assert "attacker.example" not in message.body and "8443" not in message.body


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
    zoe = django_user_model.objects.get(username="zoe")
    assert (zoe.email, zoe.email_verified) == ("zoe@example.com", False)
    [link] = mailed()  # the verification link, sent with the sign-up
    assert link.to == ["zoe@example.com"] and "/me/email/verify/" in link.body
    made = api.post("/api/users/", {"username": "yan", "password": NEW_PASSWORD}, format="json")
    assert made.status_code == 201 and django_user_model.objects.get(username="yan").email == ""
    assert len(mailed()) == 1  # no address, no link
    bad = api.post(
        "/api/users/", {"username": "xi", "password": NEW_PASSWORD, "email": "not-an-address"}, format="json"
    )
    assert bad.status_code == 400 and "email" in bad.json()


def test_an_api_sign_up_with_an_email_gets_the_verification_link_and_then_resets(api, client, django_user_model):
    made = api.post(
        "/api/users/", {"username": "wen", "password": NEW_PASSWORD, "email": "wen@example.com"}, format="json"
    )
    assert made.status_code == 201
    client.post("/accounts/password/reset/", {"email": "wen@example.com"})
    [verify] = mailed()  # no reset mail yet: the address is not verified
    found = re.search(r"https?://[^/\s]+(/me/email/verify/\S+/)", str(verify.body))
    assert found is not None, verify.body
    client.post(found.group(1))  # the page's button (its GET only shows it)
    assert django_user_model.objects.get(username="wen").email_verified
    client.post("/accounts/password/reset/", {"email": "wen@example.com"})
    assert len(mailed()) == 2 and "wen:" in mailed()[1].body


def test_reset_requests_are_limited_per_address_and_mails_per_email(alice, client, settings):
    settings.RATE_LIMITS_ENABLED = True
    settings.RATE_LIMITS = {
        **settings.RATE_LIMITS,
        "password_reset": ("3/hour", ""),
        "password_reset_mail": ("2/hour", ""),
    }
    answers = [client.post("/accounts/password/reset/", {"email": "alice@example.com"}) for _ in range(3)]
    assert [(answer.status_code, answer["Location"]) for answer in answers] == [
        (302, "/accounts/password/reset/sent/")
    ] * 3
    resets = [message for message in mailed() if message.subject != WITHHELD_SUBJECT]
    # the account's mail budget; the third asked, answered alike, mailed no link (the owner is told, once)
    assert len(resets) == 2 and len(mailed()) == 3
    refused = client.post("/accounts/password/reset/", {"email": "nobody@example.com"})
    assert refused.status_code == 429 and "Too many reset e-mails" in refused.content.decode()
    # Another network is not refused, for the same address or any other; none is mailed past the budget.
    elsewhere = Client(REMOTE_ADDR="198.51.100.7")
    assert elsewhere.post("/accounts/password/reset/", {"email": "alice@example.com"}).status_code == 302
    assert elsewhere.post("/accounts/password/reset/", {"email": "nobody@example.com"}).status_code == 302
    assert len(mailed()) == 3
