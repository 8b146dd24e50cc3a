"""Broadcast e-mail: the dispatcher schedules a mail for each target who wants staff messages by
e-mail, in the transaction that delivers the message, and the sender mails each once."""

from __future__ import annotations

from collections import Counter

import pytest
from django.core import mail

from notifications.mail.selectors import ledger_of_source
from notifications.models import MailQueue
from tests.delivery.helpers import assert_exactly_once, create, dispatch
from tests.notifications.mail_helpers import email_on, send_due, verified

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def staff(make_user):
    return make_user("boss", is_staff=True)


@pytest.fixture
def now_due(settings):
    settings.NOTIFY_EMAIL_DELAY = 0
    settings.DELIVERY_CHUNK_SIZE = 50


def _mails_by_recipient() -> Counter[str]:
    return Counter(message.to[0] for message in mail.outbox)


def test_each_opted_in_target_is_mailed_once(staff, make_user, now_due):
    opted_in = [verified(make_user(f"in{n}")) for n in range(5)]
    for person in opted_in:
        email_on(person, "message")
    others = [verified(make_user(f"out{n}")) for n in range(4)]
    delivery = create(staff)

    dispatch(delivery.delivery_id, batch_size=4)
    dispatch(delivery.delivery_id, batch_size=4)  # a second run delivers and schedules nothing more

    everyone = [staff, *opted_in, *others]
    assert_exactly_once(delivery.delivery_id, [person.pk for person in everyone])
    assert sorted(item.user_id for item in MailQueue.scan()) == sorted(str(person.pk) for person in opted_in)
    assert send_due().get("sent") == 5
    assert send_due().get("sent") == 0
    assert _mails_by_recipient() == Counter({f"{person.username}@example.com": 1 for person in opted_in})
    assert mail.outbox[0].subject == "Clinic closed Friday"
    lines = ledger_of_source(source=f"delivery#{delivery.delivery_id}")
    assert sorted(line.outcome for line in lines) == ["sent"] * 5


def test_a_full_batch_of_opted_in_targets_is_split_under_the_100_action_limit(staff, make_user, now_due):
    people = [verified(make_user(f"p{n}")) for n in range(32)]
    for person in people:
        email_on(person, "message")
    delivery = create(staff, kind="usernames", users=people)

    dispatch(delivery.delivery_id, batch_size=32)  # 32 x (delete, feed, badge, mail) + 2 > 100

    assert_exactly_once(delivery.delivery_id, [person.pk for person in people])
    assert MailQueue.count() == 32


def test_a_message_read_before_the_mail_is_due_is_not_mailed(staff, make_user, now_due):
    from notifications.services import inbox_mark_all_read

    person = verified(make_user("reader"))
    email_on(person, "message")
    delivery = create(staff, kind="usernames", users=[person])
    dispatch(delivery.delivery_id)
    inbox_mark_all_read(user_id=str(person.pk))

    assert send_due().get("skipped") == 1
    assert mail.outbox == []


def test_a_batch_reads_its_targets_preferences_once(staff, make_user, now_due, monkeypatch):
    import delivery.batches as batches_module

    calls = []
    real = batches_module.preferences_get_many
    monkeypatch.setattr(batches_module, "preferences_get_many", lambda **kwargs: calls.append(kwargs) or real(**kwargs))
    people = [verified(make_user(f"q{n}")) for n in range(6)]
    delivery = create(staff, kind="usernames", users=people)
    dispatch(delivery.delivery_id, batch_size=6)
    assert len(calls) == 1 and len(calls[0]["user_ids"]) == 6
