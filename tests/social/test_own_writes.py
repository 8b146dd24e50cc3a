"""People always see their own writes, on AWS too: under the read lag model (a GSI and an
eventually consistent read trail each write by up to 2 s), each write is made through the page
or the API a person uses, and the page or API they land on next shows it at once.

Other people's writes may reach those pages a moment later: a test waits for those (on a
condition), never for the person's own.
"""

import pytest

from actions.comments import comment_create
from project.testing.aws_read_lag import aws_read_lag_model
from project.testing.harness import wait_for

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


@pytest.fixture
def aws_read_lag():
    """Every write lags 1 to 2 s here (the suite's default floor is 0.1 s): a page that missed the
    person's own write cannot pass by a lag that ran out before it was read."""
    with aws_read_lag_model(min_lag=1.0) as stats:
        yield stats


def timeline_bodies(client) -> list[str]:
    return [view.body for view in client.get("/").context["page"].results]


def test_a_post_from_the_timeline_form_is_on_the_timeline_it_lands_on(client, alice, aws_read_lag):
    client.force_login(alice)
    answer = client.post("/", {"body": "My first post"}, follow=True)
    assert [view.body for view in answer.context["page"].results] == ["My first post"]
    assert client.post("/", {"body": "My second post"}).status_code == 302
    assert timeline_bodies(client) == ["My second post", "My first post"]
    profile = client.get("/u/alice/").context["page"].results  # and on their profile
    assert [view.body for view in profile] == ["My second post", "My first post"]
    newest = client.get("/api/users/alice/comments/").json()["results"][0]
    assert newest["body"] == "My second post"
    assert aws_read_lag.writes and aws_read_lag.reads


def test_a_post_through_the_api_is_in_the_list_the_client_reads_next(api, alice, bob):
    comment_create(author_id=str(bob.pk), body="Bob's older post")
    client = api.as_user(alice)
    posted = client.post("/api/comments/", {"body": "Alice's post"}, format="json").json()
    assert client.get("/api/comments/").json()["results"][0]["id"] == posted["id"]


def test_a_reply_is_on_the_comment_page_and_in_the_replies_api(client, api, alice, bob):
    parent = comment_create(author_id=str(alice.pk), body="A question").comment_id
    client.force_login(bob)
    page = client.post(f"/c/{parent}/", {"body": "An answer"}, follow=True)
    assert [view.body for view in page.context["replies"].results] == ["An answer"]
    rest = api.as_user(bob)
    reply = rest.post("/api/comments/", {"body": "Another answer", "parent_id": parent}, format="json").json()
    listed = rest.get(f"/api/comments/{parent}/replies/").json()["results"]
    assert [item["id"] for item in listed][-1] == reply["id"]


def test_an_edit_and_a_delete_show_on_the_timeline_at_once(client, alice):
    client.force_login(alice)
    client.post("/", {"body": "Typo here"})
    kept = client.post("/", {"body": "Keep me"})
    assert kept.status_code == 302
    typo, _ = [view.id for view in client.get("/").context["page"].results][::-1]
    assert client.post(f"/c/{typo}/edit/", {"body": "No typo"}).status_code == 302
    assert timeline_bodies(client) == ["Keep me", "No typo"]
    assert client.post(f"/c/{typo}/delete/").status_code == 302
    assert timeline_bodies(client) == ["Keep me"]


def test_a_like_shows_liked_with_its_count_on_the_list_and_in_the_live_poll(client, api, alice, bob):
    comment = comment_create(author_id=str(alice.pk), body="Like me").comment_id
    client.force_login(bob)
    # Someone else's post: the timeline lists it within about a second.
    wait_for(lambda: client.get("/").context["page"].results, what="Alice's post on the timeline")
    client.post(f"/c/{comment}/like/", {"action": "like", "next": "/"})
    [view] = client.get("/").context["page"].results
    assert (view.like_count, view.liked) == (1, True)
    rest = api.as_user(bob)
    assert rest.delete(f"/api/comments/{comment}/like/").json() == {"like_count": 0, "liked": False}
    assert rest.get("/api/comments/").json()["results"][0]["like_count"] == 0
    assert rest.put(f"/api/comments/{comment}/like/").json() == {"like_count": 1, "liked": True}
    live = rest.get(f"/api/live/?comments={comment}&hearts=1").json()
    assert (live["like_counts"], live["liked"]) == ({comment: 1}, {comment: True})


def test_staff_see_a_delivery_they_created_in_the_list_at_once(api, client, make_user):
    staff = make_user("boss", is_staff=True)
    rest = api.as_user(staff)
    message = {"title": "Closed Friday", "body": "The clinic is closed.", "audience": {"all": True}}
    created = rest.post("/api/deliveries/", message, format="json").json()
    assert [item["id"] for item in rest.get("/api/deliveries/").json()["results"]] == [created["id"]]
    client.force_login(staff)
    form = {"title": "Open Saturday", "body": "Come by.", "url": "", "audience": "all"}
    assert client.post("/admin/dynamo/deliveries/new/", form).status_code == 302
    listing = client.get("/admin/dynamo/deliveries/").content.decode()
    assert "Open Saturday" in listing
