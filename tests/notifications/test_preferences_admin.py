"""The admin's User notifications page shows a person's preferences and muted / watched threads.

Not under the read-lag model: the thread list comes from the `by_user` index, which staff may
see a second late on AWS (nothing decides a write from it)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from notifications.preferences.services import preferences_update, thread_mute
from tests.notifications.helpers import post, uid

pytestmark = pytest.mark.django_db(transaction=True)


def _signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_staff_see_a_persons_preferences_and_threads_on_the_user_notifications_page(make_user):
    user, author = make_user("ann"), make_user("author", display_name="Writer")
    thread_id = post(author, "Too loud a thread")
    preferences_update(user_id=uid(user), patch={"kinds": {"like": {"inbox": False}}, "digest": "daily"})
    thread_mute(user_id=uid(user), thread_id=thread_id)
    staff = _signed_in(make_user("boss", is_staff=True))

    page = staff.get(reverse("admin:dynamo-user-notifications"), {"username": "ANN"})

    assert page.status_code == 200
    text = page.content.decode()
    assert "<td>like</td><td>off</td><td>off</td>" in text
    assert "<td>message</td><td>on</td><td>off</td>" in text
    assert "Digest: <strong>daily</strong>" in text
    assert "muted" in text and "Writer: Too loud a thread" in text
    assert _signed_in(user).get(reverse("admin:dynamo-user-notifications"), {"username": "ann"}).status_code == 302
