"""A settings save sent after the session ended (notification settings, display name, e-mail
address): nothing is saved, the page says so, and after the log-in the form has the values back,
waiting for Save (as a report's note, a post and a reply are kept: social/drafts.py)."""

import re

import pytest
from django.test import Client

from notifications.preferences import selectors
from notifications.preferences.selectors import preferences_get

pytestmark = pytest.mark.django_db


@pytest.fixture
def bob(make_user, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return make_user("bob", display_name="Bob")


def _checked(page: str, name: str, value: str = "") -> bool:
    """Whether the input named `name` (with `value`, for a radio) is checked on the page."""
    for tag in re.findall(r"<input[^>]*>", page):
        if f'name="{name}"' in tag and (not value or f'value="{value}"' in tag):
            return " checked" in tag
    raise AssertionError(f"no input {name} {value}")


def test_notification_settings_saved_after_the_session_ended_come_back_after_the_log_in(bob):
    field = selectors.preferences_attribute("reply", "email")
    shown = {
        f"shown_{selectors.preferences_attribute(kind, channel)}": "True"
        if preferences_get(user_id=str(bob.pk)).wants(kind, channel)
        else ""
        for kind in selectors.KINDS
        for channel in selectors.CHANNELS
    }
    form = {**shown, field: "on", "digest": "daily", "shown_digest": "off"}
    form.update({selectors.preferences_attribute(k, "inbox"): "on" for k in selectors.KINDS})
    browser = Client()  # its session ended: not logged in
    answer = browser.post("/me/notifications/", form, follow=True)
    assert "were not saved" in answer.content.decode() and "back in the form" in answer.content.decode()
    assert answer.redirect_chain[0][0].startswith("/accounts/login/")
    assert not preferences_get(user_id=str(bob.pk), consistent=True).wants("reply", "email")
    browser.force_login(bob)
    page = browser.get("/me/notifications/").content.decode()
    assert "not saved yet: press Save" in page
    assert _checked(page, field) and _checked(page, "digest", "daily")
    assert not preferences_get(user_id=str(bob.pk), consistent=True).wants("reply", "email")  # only shown
    browser.post("/me/notifications/", form)
    saved = preferences_get(user_id=str(bob.pk), consistent=True)
    assert saved.wants("reply", "email") and saved.digest == "daily"


def test_a_display_name_saved_after_the_session_ended_comes_back_after_the_log_in(bob):
    browser = Client()
    answer = browser.post("/me/settings/", {"action": "name", "display_name": "Robert"}, follow=True)
    assert "were not saved" in answer.content.decode()
    bob.refresh_from_db()
    assert bob.display_name == "Bob"
    browser.force_login(bob)
    page = browser.get("/me/settings/").content.decode()
    assert 'value="Robert"' in page and "not saved yet: press Save" in page
    assert 'value="Robert"' not in browser.get("/me/settings/").content.decode()  # shown once
