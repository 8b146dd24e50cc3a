"""One push sender sending several pushes at once (`send_push --threads`, `PushSender`): the
pushes really overlap, each still goes once when two senders race, and one VAPID signature
serves a push service for half its validity."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from notifications.mail.queue import PUSH
from notifications.mail.selectors import SENT, mail_queue_due
from notifications.push import sender as sender_module
from notifications.push.sender import VAPID_HOURS, PushSender
from project.clock import ManualClock, clock_override
from tests.notifications.mail_helpers import reply_to
from tests.notifications.push_helpers import push_due, push_on, subscribed, uid

pytestmark = pytest.mark.django_db(transaction=True)  # the sender's threads read the accounts

PEOPLE = 6
THREADS = 3


@pytest.fixture
def readers(make_user, push_service):
    bob = make_user("bob", display_name="Bob")
    people, browsers = [], {}
    for n in range(PEOPLE):
        person = make_user(f"reader{n}")
        push_on(person, "reply")
        browsers[uid(person)] = subscribed(person, push_service)
        reply_to(person, bob)
        people.append(person)
    return people, browsers


def test_one_sender_has_several_pushes_under_way_at_once(readers, push_service, monkeypatch):
    """THREADS pushes must be taken by the push service before any of them is marked: a sender
    sending one at a time never gets there (the barrier breaks after a generous wait)."""
    overlap = threading.Barrier(THREADS, timeout=120)
    broken = []
    real_used = sender_module.subscription_used

    def used_then_wait(subscription):
        real_used(subscription)
        try:
            overlap.wait()  # PEOPLE is a multiple of THREADS: every wait is met by a full set
        except threading.BrokenBarrierError:
            broken.append(subscription.user_id)

    monkeypatch.setattr(sender_module, "subscription_used", used_then_wait)
    sender = PushSender(threads=THREADS)
    try:
        outcomes = [outcome for _, outcome in sender.process(mail_queue_due(channel=PUSH), stopped=lambda: False)]
    finally:
        sender.close()
    assert broken == []
    assert outcomes == [SENT] * PEOPLE
    assert sorted(push_service.counts().values()) == [1] * PEOPLE


def test_two_threaded_senders_racing_send_each_push_once(readers, push_service):
    due = mail_queue_due(channel=PUSH)
    senders = [PushSender(threads=THREADS) for _ in range(2)]
    try:
        with ThreadPoolExecutor(2) as both:
            results = list(both.map(lambda sender: list(sender.process(list(due), stopped=lambda: False)), senders))
    finally:
        for sender in senders:
            sender.close()
    outcomes = [outcome for result in results for _, outcome in result]
    assert outcomes.count(SENT) == PEOPLE  # the others: taken or already
    assert sorted(push_service.counts().values()) == [1] * PEOPLE
    assert mail_queue_due(channel=PUSH) == []


def test_a_stopped_sender_begins_no_more_pushes(readers, push_service):
    sender = PushSender(threads=THREADS)
    try:
        assert list(sender.process(mail_queue_due(channel=PUSH), stopped=lambda: True)) == []
    finally:
        sender.close()
    assert push_service.received == [] and len(mail_queue_due(channel=PUSH)) == PEOPLE


def test_one_vapid_signature_per_push_service_for_half_its_validity(make_user, push_service):
    alice, bob = make_user("alice"), make_user("bob")
    push_on(alice, "reply")
    browser = subscribed(alice, push_service)
    with clock_override(ManualClock(start=time.time())) as manual:
        reply_to(alice, bob, "One")
        reply_to(alice, bob, "Two")
        assert push_due().get("sent") == 2
        manual.advance(VAPID_HOURS * 1800 + 60)  # less than half its validity left: signed again
        reply_to(alice, bob, "Three")
        assert push_due().get("sent") == 1
    first, second, third = (one.headers["authorization"] for one in push_service.delivered(browser))
    assert first == second and third != first
    assert push_service.refused == []
