"""Profiles (/u/<username>/, /api/users/<username>/) and changing one's display name."""

import pytest
from django.test import Client

from actions.comments import comment_create
from actions.likes import like_add
from social import services

pytestmark = pytest.mark.django_db


@pytest.fixture
def alice(make_user):
    return make_user("alice", display_name="Alice Liddell")


def post(user, body, parent=None):
    return comment_create(author_id=str(user.pk), body=body, parent_id=parent.comment_id if parent else None)


def test_the_profile_shows_name_join_date_and_comments_newest_first_with_likes(alice, bob, client):
    first = post(alice, "First words")
    post(bob, "Not Alice's")
    second = post(alice, "A reply of hers", parent=first)
    like_add(comment_id=first.comment_id, user_id=str(bob.pk))
    page = client.get("/u/alice/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "Alice Liddell" in text and "@alice" in text
    assert f'joined <time datetime="{alice.date_joined.isoformat()}">{alice.date_joined:%-d %B %Y}</time>' in text
    shown = [view.id for view in page.context["page"].results]
    assert shown == [second.comment_id, first.comment_id]
    assert [view.like_count for view in page.context["page"].results] == [0, 1]
    assert "Not Alice" not in text


def test_hidden_and_deleted_comments_are_left_out_and_pages_stay_full(alice, client, api):
    posted = [post(alice, f"comment {n}") for n in range(7)]
    services.comment_set_hidden(comment_id=posted[5].comment_id, hidden=True)
    services.comment_delete(comment_id=posted[4].comment_id, author_id=str(alice.pk))
    services.comment_delete(comment_id=posted[1].comment_id, author_id=str(alice.pk))
    first = api.get("/api/users/alice/comments/?limit=2").json()
    assert [c["body"] for c in first["results"]] == ["comment 6", "comment 3"]
    second = api.get(f"/api/users/alice/comments/?limit=2&cursor={first['next']}").json()
    assert [c["body"] for c in second["results"]] == ["comment 2", "comment 0"]
    assert second["next"] is None


def test_a_cursor_of_another_persons_list_is_refused(alice, bob, api, client):
    for n in range(3):
        post(alice, f"a{n}")
        post(bob, f"b{n}")
    cursor = api.get("/api/users/alice/comments/?limit=1").json()["next"]
    answer = api.get(f"/api/users/bob/comments/?limit=1&cursor={cursor}")
    assert answer.status_code == 400 and "cursor" in answer.json()
    page = client.get(f"/u/bob/?cursor={cursor}")
    assert page.status_code == 200 and "showing the first page" in page.content.decode()


def test_every_author_name_links_to_the_profile(alice, bob, client):
    comment = post(alice, "Linked")
    post(bob, "Reply", parent=comment)
    client.force_login(bob)
    for path in ("/", f"/c/{comment.comment_id}/", "/u/alice/"):
        assert 'href="/u/alice/"' in client.get(path).content.decode(), path
    assert 'href="/u/bob/"' in client.get("/").content.decode()  # the header's own name


def test_a_username_in_another_case_redirects_and_unknown_is_404(alice, client, api, django_user_model):
    assert client.get("/u/ALICE/")["Location"] == "/u/alice/"
    assert client.get("/u/nobody/").status_code == 404
    assert api.get("/api/users/nobody/").status_code == 404
    assert api.get("/api/users/nobody/comments/").status_code == 404
    django_user_model.objects.filter(pk=alice.pk).update(is_active=False)
    assert client.get("/u/alice/").status_code == 404


def test_api_profile(alice, api):
    answer = api.get("/api/users/alice/")
    assert answer.status_code == 200
    assert answer.json() == {
        "id": str(alice.pk),
        "username": "alice",
        "display_name": "Alice Liddell",
        "date_joined": alice.date_joined.isoformat().replace("+00:00", "Z"),
    }


def test_the_settings_page_changes_the_display_name_everywhere(alice, client):
    post(alice, "Mine")
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    form = browser.get("/me/settings/")
    assert form.status_code == 200 and 'value="Alice Liddell"' in form.content.decode()
    token = form.context["csrf_token"]
    assert browser.post("/me/settings/", {"display_name": "Al"}).status_code == 403  # no CSRF token
    saved = browser.post("/me/settings/", {"display_name": "  Alice   W.  ", "csrfmiddlewaretoken": token})
    assert saved.status_code == 302
    assert "Alice W." in browser.get("/").content.decode()
    too_long = browser.post("/me/settings/", {"display_name": "x" * 51, "csrfmiddlewaretoken": token})
    assert too_long.status_code == 200 and "errorlist" in too_long.content.decode()
    browser.post("/me/settings/", {"display_name": "", "csrfmiddlewaretoken": token})
    assert client.get("/u/alice/").context["person"].display_name == "alice"  # blank: the username


def test_settings_need_a_log_in(client):
    assert client.get("/me/settings/")["Location"].startswith("/accounts/login/")


def test_api_me_changes_the_display_name(alice, api):
    as_alice = api.as_user(alice)
    answer = as_alice.patch("/api/me/", {"display_name": "Alice W."}, format="json")
    assert answer.status_code == 200 and answer.json()["display_name"] == "Alice W."
    assert as_alice.get("/api/me/").json()["display_name"] == "Alice W."
    for payload, field in (
        ({"display_name": "x" * 51}, "display_name"),
        ({}, "non_field_errors"),
        ({"display_name": "ok", "x": 1}, "x"),
    ):
        refused = as_alice.patch("/api/me/", payload, format="json")
        assert refused.status_code == 400 and field in refused.json(), payload
    api.credentials()
    assert api.patch("/api/me/", {"display_name": "x"}, format="json").status_code == 401


def _dynamodb_reads():
    """Every DynamoDB request made while the context is open, as (operation, items read)."""
    from unittest import mock

    from project.dynamo import wire

    reads: list[tuple[str, int]] = []
    sending = wire.make_api_call

    def recorded(client, operation, params):
        answer = sending(client, operation, params)
        if client.meta.service_model.service_name == "dynamodb":
            if operation == "BatchGetItem":
                items = sum(len(found) for found in answer.get("Responses", {}).values())
            else:
                items = len(answer.get("Items", [])) + (1 if "Item" in answer else 0)
            reads.append((operation, items))
        return answer

    return reads, mock.patch.object(wire, "make_api_call", recorded)


def test_a_profile_reads_a_bounded_number_of_items_however_many_tombstones(alice, client, api):
    from social.models import Comment

    kept = [post(alice, f"visible {n}") for n in range(3)]
    hidden = post(alice, "hidden by staff")
    services.comment_set_hidden(comment_id=hidden.comment_id, hidden=True)
    deleted = post(alice, "deleted by her")
    services.comment_delete(comment_id=deleted.comment_id, author_id=str(alice.pk))
    # 300 more tombstones as a delete leaves them (bulk-written: 300 posts would take long).
    with Comment.batch_write() as batch:
        for n in range(300):
            tombstone, _ = services.comment_new(author_id=str(alice.pk), body=f"gone {n}")
            tombstone.body, tombstone.deleted_at = "", tombstone.created_at
            tombstone.timeline_key = tombstone.profile_author = None
            batch.save(tombstone)
    reads, recording = _dynamodb_reads()
    with recording:
        page = client.get("/u/alice/")
        answer = api.get("/api/users/alice/comments/")
    assert [view.id for view in page.context["page"].results] == [c.comment_id for c in reversed(kept)]
    assert [c["body"] for c in answer.json()["results"]] == ["visible 2", "visible 1", "visible 0"]
    # Before the `profile` index: each view read 305 items (its 305 author-index keys, then each
    # item consistently) in 33 requests; now 3 entries of the index in 4 requests.
    items = sum(count for _, count in reads)
    assert items <= 2 * 10, reads  # two views, each: the index's entries, counts and blocks
    # Requests: per view the index, the like counts, the blocks, and each shown comment's
    # reactions (the profile index does not carry `has_reactions`): none per tombstone.
    assert len(reads) <= 2 * (6 + len(kept)), reads


def test_unhiding_lists_a_comment_again_and_the_backfill_lists_old_ones(alice, api):
    from django.core.management import call_command

    from social.models import Comment

    shown = post(alice, "shown again")
    services.comment_set_hidden(comment_id=shown.comment_id, hidden=True)
    assert api.get("/api/users/alice/comments/").json()["results"] == []
    services.comment_set_hidden(comment_id=shown.comment_id, hidden=False)
    old, hidden_old = post(alice, "from before the index"), post(alice, "hidden before the index")
    services.comment_set_hidden(comment_id=hidden_old.comment_id, hidden=True)
    for comment in (old, hidden_old):
        Comment(comment.comment_id).update(actions=[Comment.profile_author.remove()])
    assert [c["body"] for c in api.get("/api/users/alice/comments/").json()["results"]] == ["shown again"]
    call_command("profile_index_backfill")
    call_command("profile_index_backfill")  # again: nothing left to do
    listed = [c["body"] for c in api.get("/api/users/alice/comments/").json()["results"]]
    assert listed == ["from before the index", "shown again"]
