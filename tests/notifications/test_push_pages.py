"""The service worker at the site's root, the read token a push carries, and the settings page's
push box (the JavaScript journey: tests/browser/test_push_journey.py)."""

from __future__ import annotations

import json

import pytest

from notifications.feed.selectors import feed_read
from notifications.push.content import read_token
from tests.notifications.mail_helpers import newest_entry_id, reply_to
from tests.notifications.push_helpers import uid

pytestmark = [pytest.mark.django_db(transaction=True)]


def test_the_service_worker_is_served_from_the_root(client):
    answer = client.get("/push-worker.js")
    assert answer.status_code == 200
    assert answer["Content-Type"].startswith("text/javascript")
    assert b'addEventListener("push"' in answer.content
    assert answer["Service-Worker-Allowed"] == "/"


def test_the_push_token_marks_its_entry_read_and_nothing_else(api, make_user):
    alice, bob = make_user("alice"), make_user("bob")
    reply_to(alice, bob)
    entry_id = newest_entry_id(alice)
    token = read_token(user_id=uid(alice), kind="reply", entry_id=entry_id)
    answer = api.post("/api/push/read/", {"token": token}, format="json")
    assert answer.status_code == 204
    assert feed_read(user_id=uid(alice)).entries[0].read
    assert api.post("/api/push/read/", {"token": token}, format="json").status_code == 204  # twice: still read


@pytest.mark.parametrize("body", [{"token": "forged"}, {"token": 3}, {}, [1]])
def test_a_bad_token_is_a_400(api, body):
    answer = api.post("/api/push/read/", json.dumps(body), content_type="application/json")
    assert answer.status_code == 400


def test_the_settings_page_offers_push_per_kind_and_asks_nothing_on_load(client, make_user):
    client.force_login(make_user("ann"))
    page = client.get("/me/notifications/").content.decode()
    assert 'in threads you watch: </span><span class="channel-name">Push</span>' in page
    assert "Turn on push in this browser" in page and "notifications/push.js" in page
