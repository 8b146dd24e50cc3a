"""The owner's way back in when strangers have spent the account's reset mails: requests from a
network that logged in to the account, or a browser holding its device cookie, have a budget of
their own; the owner is told that mails were held back; the budget is the account's, whatever
form of the address was typed (social/reset_mail.py)."""

import pytest
from django.test import Client

from social.reset_mail import WITHHELD_SUBJECT
from tests.notifications.mail_helpers import mailed

pytestmark = pytest.mark.django_db

VICTIM = "victim@example.com"
RESET = "/accounts/password/reset/"
PASSWORD = "pw-Secret-123"
OWNER_NETWORK = "198.51.100.7"


@pytest.fixture(autouse=True)
def _limits_on(settings, manual_clock):
    settings.RATE_LIMITS_ENABLED = True
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "password_reset": ("100/hour", "")}  # requests: not the point


@pytest.fixture
def owner(make_user):
    user = make_user("owner")
    user.email, user.email_verified = VICTIM, True
    user.save()
    return user


def _strangers_spend_the_budget(settings) -> int:
    for n in range(20):
        Client(REMOTE_ADDR=f"203.0.113.{n}").post(RESET, {"email": VICTIM})
    return int(settings.RATE_LIMITS["password_reset_mail"][0].split("/")[0])


def _resets(messages) -> list:
    return [message for message in messages if message.subject != WITHHELD_SUBJECT]


def test_a_network_the_owner_logged_in_from_still_gets_the_mail(owner, settings):
    browser = Client(REMOTE_ADDR=OWNER_NETWORK)
    assert browser.post("/accounts/login/", {"username": "owner", "password": PASSWORD}).status_code == 302
    budget = _strangers_spend_the_budget(settings)
    assert len(_resets(mailed())) == budget
    fresh_browser = Client(REMOTE_ADDR=OWNER_NETWORK)  # a new browser on the owner's home network
    assert fresh_browser.post(RESET, {"email": VICTIM}).status_code == 302
    assert len(_resets(mailed())) == budget + 1


def test_a_browser_holding_the_device_cookie_still_gets_the_mail(owner, settings):
    browser = Client(REMOTE_ADDR="192.0.2.50")
    assert browser.post("/accounts/login/", {"username": "owner", "password": PASSWORD}).status_code == 302
    browser.post("/accounts/logout/")
    budget = _strangers_spend_the_budget(settings)
    browser.defaults["REMOTE_ADDR"] = "192.0.2.200"  # the laptop on a café's network: its cookie counts
    assert browser.post(RESET, {"email": VICTIM}).status_code == 302
    assert len(_resets(mailed())) == budget + 1


def test_a_strangers_request_past_the_budget_mails_nothing_and_the_owner_is_told_once(owner, settings):
    budget = _strangers_spend_the_budget(settings)
    assert len(_resets(mailed())) == budget
    Client(REMOTE_ADDR="192.0.2.9").post(RESET, {"email": VICTIM})  # a new browser, a new network
    assert len(_resets(mailed())) == budget
    notices = [message for message in mailed() if message.subject == WITHHELD_SUBJECT]
    assert len(notices) == 1 and notices[0].to == [VICTIM] and "owner" in notices[0].body


def test_the_budget_is_the_accounts_whatever_form_of_the_address_is_typed(owner, settings):
    """A dotless i matches the address in the database's case-insensitive comparison but was
    another inbox to a budget keyed by the typed text."""
    forms = [VICTIM, VICTIM.upper(), "v" + chr(0x131) + "ctim@example.com", " Victim@Example.com "]
    for n in range(5):
        for form in forms:
            Client(REMOTE_ADDR=f"203.0.113.{n}").post(RESET, {"email": form})
    budget = int(settings.RATE_LIMITS["password_reset_mail"][0].split("/")[0])
    assert len(_resets(mailed())) == budget


def test_a_reset_mail_whose_worker_died_before_finishing_goes_once(owner, settings, manual_clock, monkeypatch):
    """The worker sent the mail and died before deleting its queue item: the next worker, once
    the item's lease ran out, finds the ledger line and sends nothing again; the link in the one
    mail is made at send time (the queued item holds none)."""
    from notifications.mail import services as mail_services
    from notifications.models import MailQueue

    Client(REMOTE_ADDR=OWNER_NETWORK).post(RESET, {"email": VICTIM})
    [item] = list(MailQueue.scan())
    assert "/accounts/password/reset/" not in item.entry_id and "token" not in item.entry_id
    monkeypatch.setattr(mail_services, "mail_queue_done", lambda item: None)  # dies before the delete
    assert len(_resets(mailed())) == 1
    monkeypatch.undo()
    manual_clock.advance(settings.MAIL_LEASE_SECONDS + 1)
    assert len(_resets(mailed())) == 1
    assert list(MailQueue.scan()) == []
