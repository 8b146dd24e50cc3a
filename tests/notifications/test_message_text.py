"""A staff message is read in full in the inbox, with or without a link: its body is never cut
at the comment excerpt's length (the page and the API carry the whole text)."""

import pytest

from delivery import services
from notifications.selectors import EXCERPT_LENGTH
from tests.delivery.helpers import dispatch

pytestmark = pytest.mark.django_db(transaction=True)

BODY = (
    "The clinic is closed on Friday for the yearly inspection of the building and its lifts.\n"
    "Appointments move to Monday; the pharmacy stays open from 9 to 12. Ends here: LAST WORDS."
)


@pytest.fixture
def delivered(make_user):
    staff, alice = make_user("boss", is_staff=True), make_user("alice")
    delivery = services.delivery_create(
        title="Clinic closed Friday",
        body=BODY,
        url=None,
        audience=services.Audience(kind="usernames", usernames=("alice",)),
        created_by=staff,
    )
    dispatch(delivery.delivery_id)
    return alice


def test_the_inbox_shows_a_message_whole_without_a_link(client, delivered):
    assert len(BODY) > 2 * EXCERPT_LENGTH
    client.force_login(delivered)
    page = client.get("/notifications/").content.decode()
    assert "Clinic closed Friday" in page
    first, second = BODY.split("\n")
    assert f"{first}<br>{second}" in page  # whole, line breaks kept
    assert "…" not in page


def test_the_api_gives_a_message_its_whole_text(api, delivered):
    api.as_user(delivered)
    (message,) = api.get("/api/notifications/").json()["results"]
    assert message["kind"] == "message" and message["body"] == BODY
