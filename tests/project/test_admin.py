"""Staff pages for DynamoDB data inside /admin/."""

import pytest

from actions.comments import comment_create
from social.models import Comment

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff(make_user):
    user = make_user("staff", is_staff=True)
    user.is_superuser = True
    user.save()
    return user


def test_admin_index_lists_the_dynamodb_pages_for_staff(client, staff):
    client.force_login(staff)
    text = client.get("/admin/").content.decode()
    assert "DynamoDB" in text
    assert "/admin/dynamo/comments/" in text
    assert "/admin/dynamo/tables/" in text


@pytest.mark.parametrize("path", ["/admin/dynamo/comments/", "/admin/dynamo/tables/"])
def test_non_staff_never_see_the_dynamodb_pages(client, make_user, path):
    assert client.get(path).status_code == 302
    client.force_login(make_user("plain"))
    answer = client.get(path)
    assert answer.status_code == 302
    assert "/admin/login/" in answer["Location"]


def test_non_staff_cannot_hide_a_comment(client, make_user):
    author = make_user("author")
    comment = comment_create(author_id=str(author.pk), body="Keep me")
    client.force_login(author)
    client.post(f"/admin/dynamo/comments/{comment.comment_id}/moderate/", {"action": "hide", "confirmed": "yes"})
    assert Comment.get(comment.comment_id).hidden is False


def test_staff_find_a_comment_by_id_and_by_author_and_hide_it(client, staff, make_user):
    author = make_user("author")
    comment = comment_create(author_id=str(author.pk), body="Spam spam spam")
    client.force_login(staff)
    by_id = client.get("/admin/dynamo/comments/", {"q": comment.comment_id}).content.decode()
    assert "Spam spam spam" in by_id
    by_author = client.get("/admin/dynamo/comments/", {"q": "author"}).content.decode()
    assert "Spam spam spam" in by_author
    answer = client.post(
        f"/admin/dynamo/comments/{comment.comment_id}/moderate/", {"action": "hide", "confirmed": "yes", "q": "author"}
    )
    assert answer.status_code == 302
    assert Comment.get(comment.comment_id).hidden is True
    assert "Spam spam spam" not in client.get("/").content.decode()
    hidden_listing = client.get("/admin/dynamo/comments/", {"q": "author"}).content.decode()
    assert "Spam spam spam" in hidden_listing and "Unhide" in hidden_listing
    client.post(f"/admin/dynamo/comments/{comment.comment_id}/moderate/", {"action": "unhide"})
    assert "Spam spam spam" in client.get("/").content.decode()


def test_staff_search_for_nothing_says_so(client, staff):
    client.force_login(staff)
    text = client.get("/admin/dynamo/comments/", {"q": "nobody-here"}).content.decode()
    assert "No comment with id" in text


def test_tables_page_shows_status_counts_and_no_drift(client, staff):
    client.force_login(staff)
    text = client.get("/admin/dynamo/tables/").content.decode()
    assert "ACTIVE" in text
    assert "comments" in text and "likes" in text
    assert "errorlist" not in text
