"""The staff delivery pages: readable dates, a page that follows a running delivery, the audience form."""

import re

import pytest

from delivery.models import Delivery
from tests.delivery.helpers import create, dispatch

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def staff(make_user):
    return make_user("boss", is_staff=True)


@pytest.fixture
def browser(client, staff):
    client.force_login(staff)
    return client


def test_list_and_detail_show_dates_readably(browser, staff):
    delivery = create(staff)
    listing = browser.get("/admin/dynamo/deliveries/").content.decode()
    day, minute = delivery.created_at[:10], delivery.created_at[11:16]
    assert f">{day} {minute}</time>" in listing
    detail = browser.get(f"/admin/dynamo/deliveries/{delivery.delivery_id}/").content.decode()
    assert f">{day} {minute}</time> (" in detail  # and how long ago
    assert delivery.created_at not in detail.replace(f'datetime="{delivery.created_at}', "")


def test_help_texts_name_no_command_and_hold_no_backticks(browser, staff):
    answer = browser.post(
        "/admin/dynamo/deliveries/new/", {"title": "Hi", "body": "Hello", "url": "", "audience": "all"}, follow=True
    )
    text = answer.content.decode()
    assert "Delivery created" in text and "in the background" in text
    for page in (text, browser.get("/admin/dynamo/deliveries/").content.decode()):
        assert "manage.py" not in page and "`" not in page


def test_running_deliveries_are_followed_on_their_page_and_the_list_finished_ones_are_not(browser, staff, make_user):
    make_user("alice")
    delivery = create(staff)
    url = f"/admin/dynamo/deliveries/{delivery.delivery_id}/"
    running = browser.get(url).content.decode()
    assert f'data-progress-url="/api/deliveries/{delivery.delivery_id}/" data-status="draft"' in running
    assert "delivery/progress.js" in running
    assert '<noscript><meta http-equiv="refresh" content="5"></noscript>' in running
    for field in ("status", "delivered", "skipped", "percent", "progress", "chunks_done"):
        assert f'data-field="{field}"' in running
    # A draft's targets are not counted yet: no "0 targets, 0 pending" to mislead.
    assert "<th>Targets</th><td>counted when it is prepared</td>" in running
    assert "<th>Pending</th>" not in running
    # What the page's script reads: the staff API's live counts.
    data = browser.get(f"/api/deliveries/{delivery.delivery_id}/").json()
    assert {"status", "total_targets", "delivered_count", "skipped_count", "chunks_done"} <= data.keys()

    listing = browser.get("/admin/dynamo/deliveries/").content.decode()
    assert f'data-progress-url="/api/deliveries/{delivery.delivery_id}/" data-status="draft"' in listing
    assert "delivery/progress.js" in listing and 'data-field="delivered"' in listing

    dispatch(delivery.delivery_id)
    assert Delivery.get(delivery.delivery_id, consistent_read=True).status == "done"
    finished = browser.get(url).content.decode()
    assert '<th>Targets</th><td data-field="total">2</td>' in finished
    assert '<th>Pending</th><td><span data-field="pending">0</span>' in finished
    assert "data-progress-url" not in finished and "progress.js" not in finished and "refresh" not in finished
    listing = browser.get("/admin/dynamo/deliveries/").content.decode()
    assert "data-progress-url" not in listing and "progress.js" not in listing
    assert re.search(r"<th>Finished</th><td><time datetime=\"[^\"]+\">\d{4}-\d\d-\d\d \d\d:\d\d</time>", finished)


def test_the_audience_fields_say_which_kind_they_belong_to(browser):
    page = browser.get("/admin/dynamo/deliveries/new/").content.decode()
    assert "delivery/audience.js" in page
    assert re.search(r'<select name="group"[^>]*data-audience="group"', page)
    assert re.search(r'<textarea name="usernames"[^>]*data-audience="usernames"', page)
    assert re.search(r'<input type="file" name="usernames_file"[^>]*data-audience="usernames"', page)
    assert re.search(r'<input type="checkbox" name="ignore_unknown"[^>]*data-audience="usernames"', page)
    # Without JavaScript every field is there and the form still works.
    assert 'name="audience" value="group"' in page
    assert not re.search(r'<div class="form-row"[^>]*\shidden', page)


def test_a_delivery_cancelled_before_it_was_prepared_says_so(browser, staff):
    from delivery.services import delivery_cancel

    delivery = create(staff)
    delivery_cancel(delivery_id=delivery.delivery_id)

    page = browser.get(f"/admin/dynamo/deliveries/{delivery.delivery_id}/").content.decode()

    assert "cancelled before it was prepared, so nobody was sent it" in page
    assert "still preparing" not in page and "0 / 0" not in page


def test_a_finished_chunk_says_finished_not_who_held_it(browser, staff, make_user):
    make_user("alice")
    delivery = create(staff)
    dispatch(delivery.delivery_id, owner="vm:worker-1")

    page = browser.get(f"/admin/dynamo/deliveries/{delivery.delivery_id}/").content.decode()

    assert "<td>finished</td>" in page and "held by" not in page


def test_unknown_usernames_are_explained_in_the_pages_words(browser, make_user):
    make_user("alice")
    answer = browser.post(
        "/admin/dynamo/deliveries/new/",
        {"title": "Hi", "body": "Hello", "url": "", "audience": "usernames", "usernames": "alice\nnobody"},
    )
    text = answer.content.decode()
    assert "1 username(s) match no active account: nobody." in text
    assert "Send to the known usernames and leave the unknown ones out" in text
    assert "(ignore_unknown)" not in text
