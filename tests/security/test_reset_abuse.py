"""The password-reset mail attacked: an inbox flooded through accounts sharing its address, and
the owner's own reset spent by strangers. Mails are limited, not requests; only verified
addresses get them; and every request answers the same page (docs/explanation/security.md "Password reset")."""

import pytest
from django.core import mail
from django.test import Client

from social.reset_mail import WITHHELD_SUBJECT

pytestmark = pytest.mark.django_db

VICTIM = "victim@example.com"
RESET = "/accounts/password/reset/"
SENT = "/accounts/password/reset/sent/"


@pytest.fixture
def limits_on(settings):
    """The shipped reset limits, switched on."""
    settings.RATE_LIMITS_ENABLED = True
    return settings


@pytest.fixture
def owner(make_user):
    user = make_user("owner")
    user.email, user.email_verified = VICTIM, True
    user.save()
    return user


def _stranger(n: int) -> Client:
    return Client(REMOTE_ADDR=f"203.0.113.{n}")


def test_accounts_sharing_a_strangers_address_mail_nothing_to_it(make_user, limits_on):
    """12 accounts on one unverified address, each asked for 5 times: nothing reaches the inbox
    (mailed as each account asked, that would be 60 mails, each greeting a name the attacker chose)."""
    for n in range(12):
        squatter = make_user(f"squatter{n}", display_name="Your bank: call +1 555 0100")
        squatter.email = VICTIM
        squatter.save()
    answers = [_stranger(n).post(RESET, {"email": VICTIM}) for n in range(5)]
    assert {(answer.status_code, answer["Location"]) for answer in answers} == {(302, SENT)}
    assert mail.outbox == []


def test_one_request_sends_one_mail_and_mails_are_counted_against_the_address(owner, make_user, limits_on):
    """Several accounts the owner verified on one address: one mail per request, and the address's
    budget counts mails, so requests from anywhere send at most the budget."""
    for name in ("owner-work", "owner-club"):
        other = make_user(name)
        other.email, other.email_verified = VICTIM, True
        other.save()
    first = _stranger(1).post(RESET, {"email": VICTIM})
    assert first["Location"] == SENT and len(mail.outbox) == 1  # before: one per account
    assert all(f"{name}:" in mail.outbox[0].body for name in ("owner", "owner-work", "owner-club"))
    for n in range(2, 10):
        _stranger(n).post(RESET, {"email": VICTIM})
    budget = int(limits_on.RATE_LIMITS["password_reset_mail"][0].split("/")[0])
    resets = [message for message in mail.outbox if message.subject != WITHHELD_SUBJECT]
    assert len(resets) == budget and all(message.to == [VICTIM] for message in mail.outbox)


def test_strangers_cannot_spend_the_owners_reset(owner, limits_on):
    """20 requests from 20 addresses for the owner's address send at most the budget's mails;
    the owner's own request then answers exactly as every other (no 429 a stranger caused), and
    the logged-in owner still changes the password."""
    answers = [_stranger(n).post(RESET, {"email": VICTIM}) for n in range(20)]
    own = Client(REMOTE_ADDR="2001:db8:7:1::5").post(RESET, {"email": VICTIM})
    assert (own.status_code, own.get("Location"), own.content) == (302, SENT, b"")
    assert {(answer.status_code, answer.get("Location"), answer.content) for answer in answers} == {(302, SENT, b"")}
    budget = int(limits_on.RATE_LIMITS["password_reset_mail"][0].split("/")[0])
    resets = [message for message in mail.outbox if message.subject != WITHHELD_SUBJECT]
    assert len(resets) == budget  # the rest silently not mailed, and the page says nothing else
    browser = Client()
    browser.force_login(owner)
    changed = browser.post(
        "/accounts/password/change/",
        {"old_password": "pw-Secret-123", "new_password1": "a-fresh-Passw0rd", "new_password2": "a-fresh-Passw0rd"},
    )
    assert changed.status_code == 302 and changed["Location"] == "/accounts/password/change/done/"
    owner.refresh_from_db()
    assert owner.check_password("a-fresh-Passw0rd")


def test_only_the_requesting_network_is_refused(owner, limits_on):
    """Requests are limited per client network (IPv6: its /64): a stranger spending their own
    budget is refused, the owner's network is not."""
    stranger = Client(REMOTE_ADDR="2001:db8:bad:1::1")
    neighbour = Client(REMOTE_ADDR="2001:db8:bad:1::ffff")  # the same /64
    per_network = int(limits_on.RATE_LIMITS["password_reset"][0].split("/")[0])
    for _ in range(per_network):
        assert stranger.post(RESET, {"email": VICTIM}).status_code == 302
    assert neighbour.post(RESET, {"email": VICTIM}).status_code == 429
    assert Client(REMOTE_ADDR="2001:db8:7:1::5").post(RESET, {"email": VICTIM}).status_code == 302


def test_sign_ups_sharing_a_strangers_address_send_it_few_verification_links(api, limits_on):
    """Sign-up mails the address its verification link; 12 sign-ups from 12 networks with one
    stranger's address send it at most that address's budget of links."""
    for n in range(12):
        made = api.post(
            "/api/users/",
            {"username": f"farm{n}", "password": "a-fresh-Passw0rd", "email": VICTIM},
            format="json",
            REMOTE_ADDR=f"198.51.100.{n}",
        )
        assert made.status_code == 201
    assert mail.outbox, "sign-up with an address mails it the verification link"
    budget = int(limits_on.RATE_LIMITS["mail_verify_to"][0].split("/")[0])
    assert len(mail.outbox) == budget
    assert all("/me/email/verify/" in message.body for message in mail.outbox)
