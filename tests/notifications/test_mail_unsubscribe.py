"""One-click unsubscribe (RFC 8058): POST without a session or CSRF token; GET changes nothing."""

from __future__ import annotations

import pytest
from django.test import Client

from notifications.mail.tokens import unsubscribe_token, unsubscribe_url
from notifications.preferences.selectors import preferences_get
from notifications.preferences.services import preferences_update
from project.clock import ManualClock, clock_override
from tests.notifications.mail_helpers import email_on, uid

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(make_user):
    alice = make_user("alice")
    email_on(alice, "reply", "mention")
    return alice


def _path(url: str) -> str:
    """`https://host/mail/...` -> `/mail/...`."""
    return "/" + url.split("/", 3)[3]


def test_one_click_post_without_login_or_csrf_turns_that_kind_off(alice, settings):
    settings.SITE_URL = "https://social.example"
    url = unsubscribe_url(user_id=uid(alice), kind="reply")
    assert url.startswith("https://social.example/mail/unsubscribe/")
    client = Client(enforce_csrf_checks=True)

    answer = client.post(
        _path(url), data="List-Unsubscribe=One-Click", content_type="application/x-www-form-urlencoded"
    )

    assert answer.status_code == 200
    assert b"no longer get e-mail for replies" in answer.content
    prefs = preferences_get(user_id=uid(alice), consistent=True)
    assert not prefs.wants("reply", "email")
    assert prefs.wants("mention", "email")  # only the kind the mail was about


def test_get_shows_a_confirm_button_and_changes_nothing(alice):
    client = Client(enforce_csrf_checks=True)
    answer = client.get(f"/mail/unsubscribe/{unsubscribe_token(user_id=uid(alice), kind='reply')}/")
    assert answer.status_code == 200
    assert b'<form method="post">' in answer.content and b"Unsubscribe</button>" in answer.content
    assert preferences_get(user_id=uid(alice), consistent=True).wants("reply", "email")


def test_the_digest_link_turns_the_digest_off(alice):
    preferences_update(user_id=uid(alice), patch={"digest": "weekly"})
    Client().post(f"/mail/unsubscribe/{unsubscribe_token(user_id=uid(alice), kind='digest')}/")
    prefs = preferences_get(user_id=uid(alice), consistent=True)
    assert prefs.digest == "off" and prefs.wants("reply", "email")


@pytest.mark.parametrize(
    "token",
    [
        "not-a-token",
        # Signed by the site, but for another purpose (the verification salt): refused as well.
        "verify",
    ],
)
def test_a_bad_token_is_refused_and_changes_nothing(alice, token):
    if token == "verify":
        from notifications.mail.tokens import verify_token

        token = verify_token(user_id=uid(alice), email="alice@example.com")
    answer = Client().post(f"/mail/unsubscribe/{token}/")
    assert answer.status_code == 400
    assert preferences_get(user_id=uid(alice), consistent=True).wants("reply", "email")


def test_a_token_of_a_deleted_account_is_404(alice):
    token = unsubscribe_token(user_id=uid(alice), kind="reply")
    alice.delete()
    assert Client().post(f"/mail/unsubscribe/{token}/").status_code == 404


def test_one_click_is_never_refused_even_with_the_preference_limit_spent(alice, settings):
    """A mail client's one-click POST is not retried: refusing it (429) would leave the person
    subscribed. It skips the preference-change limit, and writes only while the e-mail is on."""
    settings.RATE_LIMITS_ENABLED = True
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "preferences": ("1/hour", "1/hour")}
    preferences_update(user_id=uid(alice), patch={"digest": "daily"})  # the hour's one change
    for kind in ("reply", "digest", "reply"):
        answer = Client().post(f"/mail/unsubscribe/{unsubscribe_token(user_id=uid(alice), kind=kind)}/")
        assert answer.status_code == 200
    prefs = preferences_get(user_id=uid(alice), consistent=True)
    assert not prefs.wants("reply", "email") and prefs.digest == "off"


def test_a_link_mailed_to_an_old_address_no_longer_unsubscribes(alice):
    alice.email = "alice@example.com"
    alice.save()
    token = unsubscribe_token(user_id=uid(alice), kind="reply", email="alice@example.com")
    alice.email = "alice@new.example"  # the old address may now be someone else's inbox
    alice.save()
    assert Client().get(f"/mail/unsubscribe/{token}/").status_code == 400
    assert Client().post(f"/mail/unsubscribe/{token}/").status_code == 400
    assert preferences_get(user_id=uid(alice), consistent=True).wants("reply", "email")


def test_a_link_mailed_to_the_current_address_unsubscribes(alice):
    alice.email = "Alice@Example.com"
    alice.save()
    token = unsubscribe_token(user_id=uid(alice), kind="reply", email="alice@example.com")
    assert Client().post(f"/mail/unsubscribe/{token}/").status_code == 200
    assert not preferences_get(user_id=uid(alice), consistent=True).wants("reply", "email")


def test_one_click_posts_are_limited_per_network(alice, settings):
    settings.RATE_LIMITS_ENABLED = True
    with clock_override(ManualClock(1_800_000_000.0)):  # no window ends mid-test
        _replay(alice)


def _replay(alice):
    path = f"/mail/unsubscribe/{unsubscribe_token(user_id=uid(alice), kind='reply')}/"
    replayer = Client(REMOTE_ADDR="203.0.113.9")
    answers = [replayer.post(path).status_code for _ in range(31)]
    assert answers[:30] == [200] * 30 and answers[30] == 429
    assert Client(REMOTE_ADDR="198.51.100.3").post(path).status_code == 200  # another network is not refused
