"""Entries of another app's kind read their text from that app's registered source:
a delivered message shows its delivery's title and body, and a message whose delivery is gone
shows as removed. notifications imports no delivery module for it."""

import pytest

from delivery.models import Delivery
from notifications.feed import selectors as feed_selectors
from project.testing.harness import wait_for
from tests.delivery.helpers import create, dispatch

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


def test_delivery_registers_the_message_source_at_start_up():
    from delivery.feed_sources import delivery_texts

    assert feed_selectors._SOURCES["message"] is delivery_texts


def test_a_message_entry_shows_its_delivery_and_then_removed_when_it_is_gone(make_user):
    staff = make_user("boss", is_staff=True)
    ann = make_user("ann")
    delivery = create(staff, kind="usernames", users=[ann], title="Closed on Friday")
    dispatch(delivery.delivery_id)
    [entry] = feed_selectors.feed_entries_list(user_id=str(ann.pk)).results
    assert (entry.kind, entry.title, entry.body, entry.removed) == (
        "message",
        "Closed on Friday",
        "The clinic is closed on Friday.",
        False,
    )
    Delivery(delivery.delivery_id).delete()
    # Texts are read eventually consistently: the delete shows within about a second.
    [entry] = wait_for(
        lambda: [e for e in feed_selectors.feed_entries_list(user_id=str(ann.pk)).results if e.removed],
        what="the message shown as removed",
    )
    assert (entry.title, entry.body, entry.removed) == (feed_selectors.REMOVED_MESSAGE, "", True)
