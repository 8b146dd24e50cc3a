"""GET /api/push/key/, POST/GET/DELETE /api/me/push-subscriptions/ and the push column of the
preferences (docs/reference/http.md "Push")."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from notifications.models import Preferences, PushSubscription
from notifications.preferences.selectors import CHANNELS, KINDS, preferences_attribute
from notifications.push.keys import b64url_decode
from tests.notifications.helpers import uid

pytestmark = [pytest.mark.django_db(transaction=True)]

URL = "/api/me/push-subscriptions/"


def test_the_key_is_the_sites_vapid_public_key(api, push_service):
    key = api.get("/api/push/key/").json()["public_key"]
    raw = b64url_decode(key)
    assert len(raw) == 65 and raw[0] == 4
    assert key == push_service.vapid_public_key


def test_no_key_set_is_a_404_not_a_5xx(api, settings):
    settings.VAPID_PRIVATE_KEY = ""
    settings.VAPID_PRIVATE_KEY_FILE = ""
    answer = api.get("/api/push/key/")
    assert answer.status_code == 404 and answer.json()["code"] == "push_not_configured"


def test_subscribe_list_and_remove(api, make_user, push_service):
    client = api.as_user(make_user("ann"))
    browser = push_service.subscribe()
    answer = client.post(URL, browser.to_json(), format="json", HTTP_USER_AGENT="Firefox on a phone")
    assert answer.status_code == 201, answer.json()
    made = answer.json()
    assert made["device"] == "Firefox on a phone" and made["endpoint_host"] == "127.0.0.1"
    again = client.post(URL, browser.to_json(), format="json")  # the same browser: the same subscription
    assert again.status_code == 201 and again.json()["id"] == made["id"]
    listed = client.get(URL).json()
    assert [one["id"] for one in listed] == [made["id"]]
    assert listed[0]["last_used_at"] is None
    assert client.delete(f"{URL}{made['id']}/").status_code == 204
    assert client.delete(f"{URL}{made['id']}/").status_code == 404
    assert client.get(URL).json() == []


def test_someone_elses_subscription_cannot_be_removed(api, make_user, push_service):
    ann, bob = make_user("ann"), make_user("bob")
    made = api.as_user(ann).post(URL, push_service.subscribe().to_json(), format="json").json()
    assert api.as_user(bob).delete(f"{URL}{made['id']}/").status_code == 404
    assert PushSubscription.count(uid(ann)) == 1


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda body: body | {"endpoint": "https://attacker.example/hook"}, "endpoint"),  # not a push service: no SSRF
        (lambda body: body | {"endpoint": "http://169.254.169.254/latest/meta-data/"}, "endpoint"),
        (lambda body: body | {"endpoint": "https://user@127.0.0.1/push/x"}, "endpoint"),
        (lambda body: body | {"endpoint": "ftp://127.0.0.1/x"}, "endpoint"),
        (lambda body: body | {"endpoint": 12}, "endpoint"),
        (lambda body: body | {"keys": {"p256dh": "AAAA", "auth": body["keys"]["auth"]}}, "keys.p256dh"),
        (lambda body: body | {"keys": {"p256dh": body["keys"]["p256dh"], "auth": "!!"}}, "keys.auth"),
        (lambda body: body | {"keys": "none"}, "keys"),
        (lambda body: body | {"extra": 1}, "extra"),
    ],
)
def test_bad_subscriptions_are_400_naming_the_field(api, make_user, push_service, change, field):
    client = api.as_user(make_user("ann"))
    answer = client.post(URL, change(push_service.subscribe().to_json()), format="json")
    assert answer.status_code == 400
    assert field in str(answer.json())
    assert client.get(URL).json() == []


def test_plain_http_only_with_local_plain_http(api, make_user, push_service, settings):
    settings.LOCAL_PLAIN_HTTP = False
    answer = api.as_user(make_user("ann")).post(URL, push_service.subscribe().to_json(), format="json")
    assert answer.status_code == 400 and "endpoint" in answer.json()


def test_vendor_hosts_and_their_subdomains_by_default(api, make_user, push_service, settings):
    settings.PUSH_SERVICE_HOSTS = ["fcm.googleapis.com", "*.notify.windows.com"]
    client = api.as_user(make_user("ann"))
    body = push_service.subscribe().to_json()
    ok = client.post(URL, body | {"endpoint": "https://fcm.googleapis.com/fcm/send/abc"}, format="json")
    assert ok.status_code == 201
    sub = client.post(URL, body | {"endpoint": "https://wns2-par02p.notify.windows.com/w/?token=x"}, format="json")
    assert sub.status_code == 201
    bare = client.post(URL, body | {"endpoint": "https://evilnotify.windows.com/w/"}, format="json")
    assert bare.status_code == 400


def test_a_person_holds_a_bounded_number(api, make_user, push_service, settings):
    settings.PUSH_SUBSCRIPTIONS_MAX = 2
    client = api.as_user(make_user("ann"))
    first = push_service.subscribe().to_json()
    assert client.post(URL, first, format="json").status_code == 201
    assert client.post(URL, push_service.subscribe().to_json(), format="json").status_code == 201
    assert client.post(URL, push_service.subscribe().to_json(), format="json").status_code == 400
    assert client.post(URL, first, format="json").status_code == 201  # the same one again still works


def test_anonymous_callers_get_401(api):
    assert api.get(URL).status_code == 401
    assert api.post(URL, {}, format="json").status_code == 401


def test_push_is_a_channel_of_every_kind_default_off(api, make_user):
    client = api.as_user(make_user("ann"))
    kinds = client.get("/api/me/preferences/").json()["kinds"]
    assert all(kinds[kind]["push"] is False for kind in KINDS)
    answer = client.patch("/api/me/preferences/", {"kinds": {"reply": {"push": True}}}, format="json")
    assert answer.status_code == 200 and answer.json()["kinds"]["reply"]["push"] is True
    assert client.patch("/api/me/preferences/", {"kinds": {"reply": {"push": 1}}}, format="json").status_code == 400


def test_every_kind_and_channel_has_its_attribute():
    """A kind added to KINDS needs its `<kind>_push` (and inbox, email) attribute on `Preferences`."""
    for kind in KINDS:
        for channel in CHANNELS:
            assert hasattr(Preferences, preferences_attribute(kind, channel)), preferences_attribute(kind, channel)


def test_logging_out_removes_the_sessions_subscriptions(make_user, push_service):
    ann = make_user("ann")
    browser = Client()
    browser.force_login(ann)
    answer = browser.post(URL, browser_json := push_service.subscribe().to_json(), content_type="application/json")
    assert answer.status_code == 201, answer.content
    assert browser_json["endpoint"]
    other = Client()  # another device of the same person keeps its subscription
    other.force_login(ann)
    assert other.post(URL, push_service.subscribe().to_json(), content_type="application/json").status_code == 201
    browser.post("/accounts/logout/")
    assert [item.subscription_id for item in PushSubscription.query(uid(ann))] == [
        item.subscription_id for item in PushSubscription.query(uid(ann)) if item.endpoint != browser_json["endpoint"]
    ]
    assert PushSubscription.count(uid(ann)) == 1


def test_the_account_export_lists_the_devices_never_their_keys(api, make_user, push_service):
    ann = make_user("ann")
    client = api.as_user(ann)
    browser = push_service.subscribe()
    assert client.post(URL, browser.to_json(), format="json", HTTP_USER_AGENT="Firefox on a phone").status_code == 201
    answer = client.get("/api/me/export/")
    text = b"".join(answer.streaming_content).decode()
    [device] = json.loads(text)["push_subscriptions"]
    assert device["endpoint_host"] == "127.0.0.1" and device["device"] == "Firefox on a phone"
    assert device["created_at"] and device["last_used_at"] is None
    keys = browser.to_json()["keys"]
    assert keys["p256dh"] not in text and keys["auth"] not in text and browser.to_json()["endpoint"] not in text
