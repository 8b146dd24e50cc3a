"""The inbox page, the header badge, "Mark all as read" without JavaScript, and the staff page."""

import pytest

from notifications import selectors
from project.testing.harness import wait_for
from tests.notifications.helpers import like, post, uid

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


@pytest.fixture
def liked(people):
    comment_id = post(people["author"], "My first post")
    like(people["alice"], comment_id)
    like(people["bob"], comment_id)
    return comment_id


def page_showing(client, url, text):
    """The page once it shows `text`: a header's badge is read eventually consistently, so other
    people's likes reach it within about a second (AWS; up to 2 s under the read lag model)."""

    def shown():
        html = client.get(url).content.decode()
        return html if text in html else None

    return wait_for(shown, what=f"{url} showing {text!r}")


def test_inbox_needs_login(client):
    answer = client.get("/notifications/")
    assert answer.status_code == 302 and "/accounts/login/" in answer["Location"]


def test_inbox_shows_unread_highlighted_with_what_its_script_marks_read(client, people, liked):
    client.force_login(people["author"])
    html = client.get("/notifications/").content.decode()
    assert "Alice and Bob liked your comment" in html
    assert "My first post" in html
    assert 'class="card notification unread"' in html
    assert f'data-read-field="comment_ids" data-read-id="{liked}"' in html
    assert f'href="/c/{liked}/"' in html
    assert "notifications/inbox.js" in html
    # showing the page does not read them: the script does, after display
    assert selectors.unread_count(user_id=uid(people["author"])) == 1  # one notification of 2 likes


def test_mark_all_as_read_works_without_javascript(client, people, liked):
    client.force_login(people["author"])
    answer = client.post("/notifications/read-all/")
    assert answer.status_code == 302 and answer["Location"] == "/notifications/"
    assert selectors.unread_count(user_id=uid(people["author"])) == 0
    html = client.get("/notifications/").content.decode()
    assert "Alice and Bob liked your comment" in html
    assert "notification unread" not in html and "data-read-id" not in html


def test_every_page_has_the_unread_badge(client, people, liked):
    client.force_login(people["author"])
    html = page_showing(client, "/", '>1<span class="visually-hidden"> unread</span></span>')
    assert "data-unread-badge" in html and 'data-live-url="/api/live/"' in html
    assert "notifications/badge.js" in html and "project/live.js" in html
    client.force_login(people["carol"])
    html = client.get(f"/c/{liked}/").content.decode()
    assert ' hidden>0<span class="visually-hidden"> unread</span></span>' in html


def test_staff_page_shows_a_users_notifications_and_badge(client, people, make_user, liked):
    from notifications import services as notification_services

    notification_services.like_notifications_mark_all_read(user_id=uid(people["author"]))
    like(people["carol"], liked)
    staff = make_user("staffer", is_staff=True)
    client.force_login(staff)
    html = client.get("/admin/dynamo/notifications/", {"username": "author"}).content.decode()
    assert "badge 1" in html
    assert "Carol liked your comment" in html
    assert "Alice and Bob liked your comment" in html
    assert "No user named" in client.get("/admin/dynamo/notifications/", {"username": "nobody"}).content.decode()
    assert "User notifications" in client.get("/admin/").content.decode()


def test_staff_page_is_for_staff_only(client, people):
    client.force_login(people["alice"])
    answer = client.get("/admin/dynamo/notifications/", {"username": "author"})
    assert answer.status_code == 302 and "/admin/login/" in answer["Location"]


def test_staff_page_shows_replies_and_broadcast_messages_too(client, people, make_user, liked):
    from actions.comments import comment_create
    from tests.delivery.helpers import create, dispatch

    author = people["author"]
    comment_create(author_id=uid(people["carol"]), body="A reply from Carol", parent_id=liked)
    staff = make_user("staffer", is_staff=True)
    delivery = create(staff, kind="usernames", users=[author], title="Clinic closed Friday")
    dispatch(delivery.delivery_id)
    client.force_login(staff)
    html = client.get("/admin/dynamo/notifications/", {"username": "author"}).content.decode()
    assert "Replies and messages (2)" in html
    assert "Carol replied to your comment" in html
    assert "broadcast message" in html and "Clinic closed Friday" in html
    assert "Alice and Bob liked your comment" in html


def test_a_staff_message_in_the_inbox_says_who_sent_it_and_links_only_somewhere(client, people, make_user):
    from tests.delivery.helpers import create, dispatch

    author = people["author"]
    delivery = create(make_user("staffer", is_staff=True), kind="usernames", users=[author], title="Clinic closed")
    dispatch(delivery.delivery_id)
    client.force_login(author)

    html = client.get("/notifications/").content.decode()

    assert "Message from the Dynamo Social staff" in html and "<strong>Clinic closed</strong>" in html
    assert 'href=""' not in html
    assert 'id="mark-all-note" hidden' in html  # something is unread: no note
    client.post("/notifications/read-all/")
    html = client.get("/notifications/").content.decode()
    assert "disabled>Mark all as read" in html and 'id="mark-all-note">Nothing unread' in html
