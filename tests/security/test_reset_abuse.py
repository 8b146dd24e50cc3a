"""The password-reset mail attacked: an inbox flooded through accounts sharing its address, and
the owner's own reset spent by strangers. Mails are limited, not requests; only verified
addresses get them; and every request answers the same page (docs/explanation/security.md "Password reset")."""

import re
from collections import Counter
from contextlib import contextmanager
from unittest import mock

import pytest
from django.core import mail
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from project.dynamo import wire
from social.models import User
from social.reset_mail import WITHHELD_SUBJECT
from tests.notifications.mail_helpers import mailed

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
    assert mailed() == []


def test_one_request_sends_one_mail_and_mails_are_counted_against_the_address(owner, make_user, limits_on):
    """Several accounts the owner verified on one address: one mail per request, and the address's
    budget counts mails, so requests from anywhere send at most the budget."""
    for name in ("owner-work", "owner-club"):
        other = make_user(name)
        other.email, other.email_verified = VICTIM, True
        other.save()
    first = _stranger(1).post(RESET, {"email": VICTIM})
    assert first["Location"] == SENT and len(mailed()) == 1  # before: one per account
    assert all(f"{name}:" in mailed()[0].body for name in ("owner", "owner-work", "owner-club"))
    for n in range(2, 10):
        _stranger(n).post(RESET, {"email": VICTIM})
    budget = int(limits_on.RATE_LIMITS["password_reset_mail"][0].split("/")[0])
    resets = [message for message in mailed() if message.subject != WITHHELD_SUBJECT]
    assert len(resets) == budget and all(message.to == [VICTIM] for message in mailed())


def test_strangers_cannot_spend_the_owners_reset(owner, limits_on):
    """20 requests from 20 addresses for the owner's address send at most the budget's mails;
    the owner's own request then answers exactly as every other (no 429 a stranger caused), and
    the logged-in owner still changes the password."""
    answers = [_stranger(n).post(RESET, {"email": VICTIM}) for n in range(20)]
    own = Client(REMOTE_ADDR="2001:db8:7:1::5").post(RESET, {"email": VICTIM})
    assert (own.status_code, own.get("Location"), own.content) == (302, SENT, b"")
    assert {(answer.status_code, answer.get("Location"), answer.content) for answer in answers} == {(302, SENT, b"")}
    budget = int(limits_on.RATE_LIMITS["password_reset_mail"][0].split("/")[0])
    resets = [message for message in mailed() if message.subject != WITHHELD_SUBJECT]
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


def _sign_up(api, name: str, network: str):
    made = api.post(
        "/api/users/",
        {"username": name, "password": "a-fresh-Passw0rd", "email": VICTIM},
        format="json",
        REMOTE_ADDR=network,
    )
    assert made.status_code == 201
    return made


def test_strangers_sharing_an_address_cannot_keep_its_owner_from_their_verification_link(api, limits_on, manual_clock):
    """12 sign-ups from 12 networks with a stranger's address send it at most the address's budget
    of mails, and once the owner's own account waits on the address, every further mail to it
    carries the owner's link: strangers spending the budget hand the owner their link."""
    budget = int(limits_on.RATE_LIMITS["mail_verify_to"][0].split("/")[0])
    for n in range(12):
        _sign_up(api, f"farm{n}", f"198.51.100.{n}")
    assert len(mailed()) == budget  # the inbox is not flooded
    _sign_up(api, "owner", "192.0.2.7")  # the owner signs up: the address's budget is spent
    assert len(mailed()) == budget
    manual_clock.advance(3600)
    for n in range(12, 12 + budget):  # the strangers spend the next hour's budget first
        _sign_up(api, f"farm{n}", f"198.51.100.{n}")
    later = mailed()[budget:]
    assert len(later) == budget
    for message in later:
        assert "owner: http" in message.body, message.body  # the owner's link is in every one
    owner_link = re.search(r"owner: (https?://\S+/me/email/verify/\S+/)", later[0].body).group(1)
    assert Client().post("/" + owner_link.split("/", 3)[3]).status_code == 200
    owner = User.objects.get(username="owner")
    assert owner.email_verified and owner.email == VICTIM
    assert not User.objects.filter(username__startswith="farm", email_verified=True).exists()


def test_more_strangers_than_a_mail_lists_still_cannot_keep_the_owner_from_verifying(api, limits_on, manual_clock):
    """The owner signs up first, then 26 strangers' accounts take the address: a mail lists only
    the newest accounts' own links, so the owner's falls off it, but every mail to the address
    carries the address's link to a page listing every account waiting on it (paged), where the
    owner verifies theirs and only theirs."""
    from notifications.mail import verification
    from notifications.mail import views as mail_views

    _sign_up(api, "owner", "192.0.2.7")
    for n in range(26):
        _sign_up(api, f"farm{n}", f"198.51.100.{n}")
    manual_clock.advance(3600)
    _sign_up(api, "farm26", "198.51.100.26")
    last = mailed()[-1]
    assert last.body.count("farm") == verification.VERIFY_LINKS_PER_MAIL and "owner: http" not in last.body
    address_link = re.search(r"https?://\S+(/me/email/accounts/\S+/)", last.body).group(1)

    with mock.patch.object(mail_views, "ADDRESS_PAGE_SIZE", 10):
        first = Client().get(address_link)
        assert first.status_code == 200 and "farm26" in first.content.decode()
        assert 'value="owner"' not in first.content.decode() and "?page=2" in first.content.decode()
        found = Client().get(address_link + "?page=3").content.decode()  # 28 accounts, newest first
    assert 'name="username" value="owner"' in found and VICTIM in found
    verified = Client().post(address_link, {"username": "owner"})
    assert verified.status_code == 200 and VICTIM in verified.content.decode()
    assert User.objects.get(username="owner").email_verified
    assert not User.objects.filter(username__startswith="farm", email_verified=True).exists()
    again = Client().post(address_link, {"username": "owner"})  # twice: nothing more, and it says why
    assert again.status_code == 302 and again["Location"] == address_link

    assert Client().get("/me/email/accounts/forged/").status_code == 400
    assert Client().post("/me/email/accounts/forged/", {"username": "farm1"}).status_code == 400
    limits_on.EMAIL_VERIFY_TIMEOUT = -1  # signing's own clock: every token is past its age now
    assert Client().get(address_link).status_code == 400  # it expires with the mail's other links
    assert not User.objects.filter(username__startswith="farm", email_verified=True).exists()


@contextmanager
def _work_recorded():
    """The request's database queries (SQL, values left out) and DynamoDB calls (operation, table)."""
    dynamodb: Counter = Counter()
    sending = wire.make_api_call

    def recorded(client, operation, params):
        table = params.get("TableName") or ",".join(params.get("RequestItems", {}))
        dynamodb[(operation, table.split("_", 2)[-1])] += 1
        return sending(client, operation, params)

    with CaptureQueriesContext(connection) as queries, mock.patch.object(wire, "make_api_call", recorded):
        yield queries, dynamodb


def test_a_reset_request_does_the_same_work_for_a_known_and_an_unknown_address(owner, limits_on):
    """With an SMTP server, a mail sent in the request's thread (even after the answer) kept the
    next request on the connection waiting for a known address only. The request now sends
    nothing and makes the same calls for an address with a verified account and one without."""
    work = {}
    for n, email in enumerate((VICTIM, "nobody@example.com")):
        browser = _stranger(100 + n)
        with _work_recorded() as (queries, dynamodb):
            answer = browser.post(RESET, {"email": email})
        assert (answer.status_code, answer["Location"]) == (302, SENT)
        assert mail.outbox == []  # no SMTP call in the request, nor after its answer
        work[email] = ([query["sql"].replace(email, "?") for query in queries.captured_queries], dynamodb)
    assert work[VICTIM] == work["nobody@example.com"]
    assert work[VICTIM][1][("PutItem", "mail_queue")] == 1
    assert [message.to for message in mailed()] == [[VICTIM]]  # the worker sends the known one's
