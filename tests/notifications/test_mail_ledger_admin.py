"""The staff Mail ledger page: per person and per delivery, what went on which channel and how."""

from __future__ import annotations

import html

import pytest
from django.test import Client

from delivery import preparation, services
from delivery.dispatch import delivery_dispatch
from notifications.mail.services import ledger_put
from project.clock import ManualClock, clock, clock_override
from tests.notifications.mail_helpers import email_on, reply_to, schedule, send_due, uid, verified

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(make_user):
    client = Client()
    client.force_login(make_user("boss", is_staff=True))
    return client


def test_a_persons_lines_show_sent_skipped_and_unknown(staff_client, make_user, settings):
    settings.MAIL_LEASE_SECONDS = 60
    alice, bob = verified(make_user("alice")), make_user("bob")
    email_on(alice, "reply")
    reply_to(alice, bob)
    schedule(alice)
    send_due()
    with clock_override(ManualClock(clock.now() - 3600)):  # claimed an hour ago by a sender that died
        ledger_put(user_id=uid(alice), source="reply:lost", kind="reply", state="sending")
    ledger_put(user_id=uid(alice), source="reply:read", kind="reply", state="skipped", reason="read in the inbox")

    page = staff_client.get("/admin/dynamo/mail-ledger/", {"username": "ALICE"}).content.decode()

    assert "alice@example.com (verified)" in page
    assert "<strong>sent</strong>" in page and "“Bob” replied to your comment" in html.unescape(page)  # names quoted
    assert "<strong>unknown</strong>" in page and "reply:lost" in page
    assert "<strong>skipped</strong>" in page and "read in the inbox" in page


def test_a_deliverys_people_show_inbox_and_email_outcomes(staff_client, make_user, settings):
    settings.NOTIFY_EMAIL_DELAY = 0
    staff = make_user("sender", is_staff=True)
    wants = verified(make_user("wants"))
    make_user("plain")
    email_on(wants, "message")
    delivery = services.delivery_create(
        title="Clinic closed",
        body="Friday.",
        url=None,
        audience=services.Audience(kind="usernames", usernames=("wants", "plain")),
        created_by=staff,
    )
    preparation.delivery_prepare(delivery_id=delivery.delivery_id)
    delivery_dispatch(delivery_id=delivery.delivery_id, owner="test", batch_size=10, lease_seconds=30)
    send_due()

    page = staff_client.get("/admin/dynamo/mail-ledger/", {"delivery": delivery.delivery_id}).content.decode()

    assert "2 people" in page

    def row(name: str) -> str:
        return page.split(f">{name}<")[1].split("</tr>")[0]

    assert "delivered" in row("wants") and "<strong>sent</strong>" in row("wants")
    assert "delivered" in row("plain") and "not wanted" in row("plain")


def test_unknown_names_and_ids_say_so(staff_client):
    assert "No user named" in staff_client.get("/admin/dynamo/mail-ledger/", {"username": "nobody"}).content.decode()
    assert "No delivery" in staff_client.get("/admin/dynamo/mail-ledger/", {"delivery": "f" * 32}).content.decode()


def test_the_page_is_for_staff_only(make_user):
    client = Client()
    client.force_login(make_user("someone"))
    assert client.get("/admin/dynamo/mail-ledger/").status_code == 302
