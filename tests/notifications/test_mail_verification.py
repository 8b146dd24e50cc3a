"""E-mail address verification from the settings page."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from notifications.mail.tokens import verify_token
from tests.notifications.mail_helpers import mailed, uid

pytestmark = pytest.mark.django_db


@pytest.fixture
def signed_in(make_user):
    user = make_user("alice")
    client = Client()
    client.force_login(user)
    return user, client


def _link(message) -> str:
    found = re.search(r"https?://\S+/me/email/verify/\S+/", message.body)
    assert found is not None, message.body
    return found.group(0)


def test_setting_an_address_sends_a_link_that_verifies_it(signed_in, settings):
    settings.SITE_URL = "https://social.example"
    user, client = signed_in
    answer = client.post("/me/settings/", {"action": "email", "email": "alice@example.com"}, follow=True)
    assert b"We sent a verification link to alice@example.com" in answer.content
    user.refresh_from_db()
    assert (user.email, user.email_verified) == ("alice@example.com", False)
    assert b"Not verified" in answer.content

    (message,) = mailed()
    assert message.to == ["alice@example.com"]
    link = _link(message)
    assert link.startswith("https://social.example/me/email/verify/")
    path = "/" + link.split("/", 3)[3]
    shown = Client().get(path)  # what a mail scanner does: a page with a button, nothing verified
    assert shown.status_code == 200 and b"Verify alice@example.com" in shown.content
    user.refresh_from_db()
    assert not user.email_verified
    answer = Client().post(path)  # another browser, not logged in, presses the button
    assert answer.status_code == 200 and b"is verified" in answer.content
    user.refresh_from_db()
    assert user.email_verified


def test_changing_the_address_clears_the_verification_and_voids_old_links(signed_in):
    user, client = signed_in
    user.email, user.email_verified = "old@example.com", True
    user.save()
    old_link = f"/me/email/verify/{verify_token(user_id=uid(user), email='old@example.com')}/"

    client.post("/me/settings/", {"action": "email", "email": "new@example.com"})
    user.refresh_from_db()
    assert (user.email, user.email_verified) == ("new@example.com", False)
    assert Client().get(old_link).status_code == 400
    assert Client().post(old_link).status_code == 400
    user.refresh_from_db()
    assert not user.email_verified


def test_the_button_sends_a_new_link_and_a_bad_token_verifies_nothing(signed_in):
    user, client = signed_in
    user.email = "alice@example.com"
    user.save()
    client.post("/me/settings/", {"action": "verify", "email": "alice@example.com"})
    assert len(mailed()) == 1
    assert Client().get("/me/email/verify/forged/").status_code == 400
    user.refresh_from_db()
    assert not user.email_verified
    path = _link(mailed()[0]).replace("http://127.0.0.1:8000", "")
    assert Client().get(path).status_code == 200
    user.refresh_from_db()
    assert not user.email_verified  # a GET (a link scanner's) verifies nothing
    assert Client().post(path).status_code == 200
    user.refresh_from_db()
    assert user.email_verified


def test_the_display_name_form_still_saves(signed_in):
    user, client = signed_in
    client.post("/me/settings/", {"display_name": "Alice A."})
    user.refresh_from_db()
    assert user.display_name == "Alice A."
