"""The deliveries API and the staff pages."""

import pytest
from django.contrib.auth.models import Group
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from delivery.models import Delivery
from tests.delivery.helpers import assert_exactly_once, dispatch

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


@pytest.fixture
def staff(make_user):
    return make_user("boss", is_staff=True)


def post(api, payload):
    return api.post("/api/deliveries/", payload, format="json")


def test_staff_creates_and_follows_a_delivery(api, staff, make_user):
    users = [make_user() for _ in range(3)]
    api.as_user(staff)
    answer = post(
        api, {"title": "Welcome", "body": "Hello all", "url": "https://example.org/x", "audience": {"all": True}}
    )
    assert answer.status_code == 201, answer.json()
    created = answer.json()
    assert created["status"] == "draft" and created["audience"] == {"kind": "all"}
    assert created["created_by"] == {"id": str(staff.pk), "username": "boss"}
    dispatch(created["id"])
    detail = api.get(f"/api/deliveries/{created['id']}/").json()
    assert (detail["status"], detail["total_targets"], detail["delivered_count"]) == ("done", 4, 4)
    listed = api.get("/api/deliveries/").json()
    assert [d["id"] for d in listed["results"]] == [created["id"]] and listed["next"] is None
    assert_exactly_once(created["id"], [staff.pk] + [u.pk for u in users])


def test_usernames_audience_reports_unknown_names(api, staff, make_user):
    alice = make_user("alice")
    api.as_user(staff)
    answer = post(api, {"title": "t", "body": "b", "audience": {"usernames": ["alice", "nobody"]}})
    assert answer.status_code == 400
    assert answer.json()["unknown_usernames"] == ["nobody"] and "audience" in answer.json()
    assert Delivery.count(consistent_read=True) == 0
    answer = post(
        api, {"title": "t", "body": "b", "audience": {"usernames": ["alice", "nobody"], "ignore_unknown": True}}
    )
    assert answer.status_code == 201
    assert answer.json()["audience"]["unknown_usernames"] == ["nobody"]
    dispatch(answer.json()["id"])
    assert_exactly_once(answer.json()["id"], [alice.pk])


def test_group_audience_and_unknown_group(api, staff, make_user):
    Group.objects.create(name="nurses")
    api.as_user(staff)
    assert post(api, {"title": "t", "body": "b", "audience": {"group": "nurses"}}).status_code == 201
    answer = post(api, {"title": "t", "body": "b", "audience": {"group": "surgeons"}})
    assert answer.status_code == 400 and "audience" in answer.json()


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"body": "b", "audience": {"all": True}}, "title"),
        ({"title": "t", "body": "b"}, "audience"),
        ({"title": "t", "body": "b", "audience": {}}, "audience"),
        ({"title": "t", "body": "b", "audience": {"all": True, "group": "x"}}, "audience"),
        ({"title": "t", "body": "b", "audience": {"all": False}}, "audience"),
        ({"title": "t", "body": "b", "audience": {"usernames": "alice"}}, "audience"),
        ({"title": "t", "body": "b", "audience": {"usernames": []}}, "audience"),
        ({"title": "t", "body": "b", "audience": {"colour": "blue"}}, "audience"),
        ({"title": "t", "body": "b", "audience": ["all"]}, "audience"),
        ({"title": "t" * 101, "body": "b", "audience": {"all": True}}, "title"),
        ({"title": "t", "body": "b" * 401, "audience": {"all": True}}, "body"),
        (
            {"title": "t", "body": "本" * 400 + "", "url": "https://e.org/" + "x" * 480, "audience": {"all": True}},
            "body",
        ),
        ({"title": "t", "body": "b", "url": "not a url", "audience": {"all": True}}, "url"),
        ({"title": "t", "body": "b", "audience": {"all": True}, "extra": 1}, "extra"),
    ],
)
def test_bad_input_is_a_400_on_the_field(api, staff, payload, field):
    api.as_user(staff)
    answer = post(api, payload)
    assert answer.status_code == 400, answer.json()
    assert field in answer.json()
    assert Delivery.count(consistent_read=True) == 0


def test_non_staff_gets_403_and_anonymous_401(api, make_user):
    staff = make_user("boss", is_staff=True)
    api.as_user(staff)
    created = post(api, {"title": "t", "body": "b", "audience": {"all": True}}).json()
    api.as_user(make_user("plain"))
    assert post(api, {"title": "t", "body": "b", "audience": {"all": True}}).status_code == 403
    assert api.get("/api/deliveries/").status_code == 403
    assert api.get(f"/api/deliveries/{created['id']}/").status_code == 403
    assert api.post(f"/api/deliveries/{created['id']}/cancel/").status_code == 403
    api.credentials()
    assert api.get("/api/deliveries/").status_code == 401


def test_unknown_delivery_is_404(api, staff):
    api.as_user(staff)
    assert api.get("/api/deliveries/0123456789abcdef0123456789abcdef/").status_code == 404
    assert api.get("/api/deliveries/" + "x" * 3000 + "/").status_code == 404
    assert api.post("/api/deliveries/nope/cancel/").status_code == 404


def test_cancel_api(api, staff):
    api.as_user(staff)
    created = post(api, {"title": "t", "body": "b", "audience": {"all": True}}).json()
    answer = api.post(f"/api/deliveries/{created['id']}/cancel/")
    assert answer.status_code == 200 and answer.json()["status"] == "cancelled"
    assert dispatch(created["id"]).delivered == 0


def test_list_paginates(api, staff):
    api.as_user(staff)
    ids = [post(api, {"title": f"t{n}", "body": "b", "audience": {"all": True}}).json()["id"] for n in range(3)]
    first = api.get("/api/deliveries/?limit=2").json()
    second = api.get("/api/deliveries/", {"limit": 2, "cursor": first["next"]}).json()
    assert [d["id"] for d in first["results"] + second["results"]] == ids[::-1]
    assert api.get("/api/deliveries/?cursor=garbage").status_code == 400


# --- staff pages ---------------------------------------------------------------


@pytest.fixture
def browser(staff):
    client = Client()
    client.force_login(staff)
    return client


def test_admin_create_with_uploaded_usernames_then_detail_and_cancel(browser, make_user):
    alice, bob = make_user("alice"), make_user("bob")
    upload = SimpleUploadedFile("names.csv", b"username\nalice\nbob\nzed\n", content_type="text/csv")
    form = {
        "title": "Hi",
        "body": "Hello",
        "url": "",
        "audience": "usernames",
        "usernames": "",
        "usernames_file": upload,
    }
    page = browser.post("/admin/dynamo/deliveries/new/", form)
    assert page.status_code == 200 and b"zed" in page.content and Delivery.count(consistent_read=True) == 0
    upload.seek(0)
    page = browser.post("/admin/dynamo/deliveries/new/", form | {"ignore_unknown": "on"})
    assert page.status_code == 302
    delivery = next(iter(Delivery.scan(consistent_read=True)))
    assert page["Location"].endswith(f"/deliveries/{delivery.delivery_id}/")
    detail = browser.get(page["Location"])
    assert detail.status_code == 200 and b"draft" in detail.content and b"zed" in detail.content
    assert browser.post(f"/admin/dynamo/deliveries/{delivery.delivery_id}/prepare/").status_code == 302
    detail = browser.get(page["Location"])
    assert b"ready" in detail.content and f"{alice.pk}, {bob.pk}".encode() in detail.content  # pending sample
    listing = browser.get("/admin/dynamo/deliveries/")
    assert listing.status_code == 200 and b"Hi" in listing.content
    assert browser.post(f"/admin/dynamo/deliveries/{delivery.delivery_id}/cancel/").status_code == 302
    assert Delivery.get(delivery.delivery_id, consistent_read=True).status == "cancelled"


def test_admin_create_all_and_group(browser, make_user):
    Group.objects.create(name="doctors")
    base = {"title": "Hi", "body": "Hello", "url": ""}
    assert browser.post("/admin/dynamo/deliveries/new/", base | {"audience": "all"}).status_code == 302
    page = browser.post("/admin/dynamo/deliveries/new/", base | {"audience": "group"})
    assert page.status_code == 200 and b"Choose a group" in page.content
    assert (
        browser.post("/admin/dynamo/deliveries/new/", base | {"audience": "group", "group": "doctors"}).status_code
        == 302
    )
    assert Delivery.count(consistent_read=True) == 2
    assert b"Deliveries" in browser.get("/admin/").content


def test_admin_pages_are_staff_only(make_user):
    client = Client()
    client.force_login(make_user("plain"))
    assert client.get("/admin/dynamo/deliveries/").status_code == 302  # to the admin login
