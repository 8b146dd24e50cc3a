"""A list of usernames reaches everyone it names: commas, semicolons and whitespace all separate
names, wherever the list comes from (the staff form, an uploaded file, the API), and names match
in any letter case as log-in does; unknown names are reported as they were typed."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from delivery.models import Delivery
from tests.delivery.helpers import assert_exactly_once, dispatch

pytestmark = pytest.mark.django_db(transaction=True)

NEW = "/admin/dynamo/deliveries/new/"
FORM = {"title": "Hi", "body": "Hello", "url": "", "audience": "usernames"}


@pytest.fixture
def staff(make_user):
    return make_user("boss", is_staff=True)


@pytest.fixture
def staff_client(staff):
    client = Client()
    client.force_login(staff)
    return client


@pytest.fixture
def people(make_user):
    return {name: make_user(name) for name in ("alice", "bob", "carol", "dave", "erin")}


def only_delivery() -> Delivery:
    deliveries = list(Delivery.scan(consistent_read=True))
    assert len(deliveries) == 1
    return deliveries[0]


def test_the_form_sends_to_every_name_of_a_line_in_any_case(staff_client, people):
    pasted = "alice, Bob\r\ncarol;DAVE  erin\n@Alice"
    answer = staff_client.post(NEW, FORM | {"usernames": pasted})
    assert answer.status_code == 302, answer.content.decode()
    delivery = only_delivery()
    assert delivery.audience_requested == 5 and not delivery.unknown_count
    dispatch(delivery.delivery_id)
    assert_exactly_once(delivery.delivery_id, [person.pk for person in people.values()])


def test_the_form_reports_every_unknown_name_of_a_line_as_typed(staff_client, people):
    answer = staff_client.post(NEW, FORM | {"usernames": "alice, Nobody, bob; Zed"})
    text = answer.content.decode()
    assert answer.status_code == 200 and Delivery.count(consistent_read=True) == 0
    assert "2 username(s) match no active account: Nobody, Zed." in text


def test_an_uploaded_file_is_read_the_same_way(staff_client, people):
    upload = SimpleUploadedFile("names.csv", b"username\r\nALICE,bob\r\ncarol;zed\r\n", content_type="text/csv")
    answer = staff_client.post(NEW, FORM | {"usernames": "", "usernames_file": upload, "ignore_unknown": "on"})
    assert answer.status_code == 302, answer.content.decode()
    delivery = only_delivery()
    assert delivery.unknown_usernames == ["zed"] and delivery.unknown_count == 1
    dispatch(delivery.delivery_id)
    assert_exactly_once(delivery.delivery_id, [people[name].pk for name in ("alice", "bob", "carol")])


def test_the_api_splits_items_and_ignores_case(api, staff, people):
    api.as_user(staff)
    audience = {"usernames": ["Alice, bob", "CAROL;dave erin", "alice"]}
    answer = api.post("/api/deliveries/", {"title": "t", "body": "b", "audience": audience}, format="json")
    assert answer.status_code == 201, answer.json()
    dispatch(answer.json()["id"])
    assert_exactly_once(answer.json()["id"], [person.pk for person in people.values()])
    unknown = api.post(
        "/api/deliveries/", {"title": "t", "body": "b", "audience": {"usernames": ["Alice,NoSuch"]}}, format="json"
    )
    assert unknown.status_code == 400 and unknown.json()["unknown_usernames"] == ["NoSuch"]
