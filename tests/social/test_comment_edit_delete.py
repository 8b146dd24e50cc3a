"""An author edits and deletes their own comment or reply: the services, the API, the pages,
and every place that showed the comment (timeline, replies, likes, ranking, feed, inbox,
activity log), alone and racing likes, replies and each other under AWS's conflict rules."""

import random
import threading

import pytest
from django.test import Client

from actions.comments import comment_create
from actions.likes import like_add
from notifications.feed.selectors import REMOVED_REPLY
from project.errors import Conflict, NotFound, PermissionDenied
from project.testing.harness import wait_for
from social import counters, ranking, selectors, services
from social.activity.models import activity_model
from social.activity.month_tables import activity_table_exists
from social.counters import LIKES
from social.models import Comment, Like
from tests.social.helpers import aggregate

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("aws_read_lag")]

MISSING = "00000000-0000-0000-0000-000000000000"


def post(user, body="Hello", parent=None):
    return comment_create(author_id=str(user.pk), body=body, parent_id=parent.comment_id if parent else None)


def stored(comment) -> Comment:
    return Comment.get(comment.comment_id, consistent_read=True)


def timeline_ids() -> list[str]:
    return [view.id for view in selectors.comment_timeline(viewer_id=None).results]


def timeline_shown() -> list[tuple[str, bool, str]]:
    return [(view.id, view.deleted, view.body) for view in selectors.comment_timeline(viewer_id=None).results]


def ranked() -> list[str]:
    return [r.comment.id for r in ranking.ranking_top(kind=LIKES, limit=10)]


def page_showing(client, url: str, text: str) -> str:
    """The page once it shows `text` (what someone else wrote a moment ago: lists trail by about a second)."""

    def shown():
        html = client.get(url).content.decode()
        return html if text in html else None

    return wait_for(shown, what=f"{url} showing {text!r}")


def reply_ids(parent) -> list[str]:
    """Every visible reply, page after page."""
    ids, cursor = [], None
    while True:
        page = selectors.comment_replies(comment_id=parent.comment_id, viewer_id=None, cursor=cursor)
        ids += [view.id for view in page.results]
        if not (cursor := page.next_cursor):
            return ids


def actions_logged(user, comment) -> list[str]:
    """The user's logged actions on this comment (the log's monthly tables outlive a test)."""
    months = [month for month in ("202611", "202612") if activity_table_exists(month=month)]
    items = [item for month in months for item in activity_model(month).query(str(user.pk), consistent_read=True)]
    return [item.action for item in items if item.object_id == comment.comment_id]


# --- services ------------------------------------------------------------------------


def test_an_edit_changes_the_body_and_shows_when(alice):
    comment = post(alice, "Helo")
    services.comment_edit(comment_id=comment.comment_id, author_id=str(alice.pk), body="  Hello  ")
    view = selectors.comment_get(comment_id=comment.comment_id, viewer_id=None)
    assert view.body == "Hello"
    assert view.edited_at is not None and view.edited_at >= view.created_at
    assert actions_logged(alice, comment) == ["comment", "edit"]


def test_only_the_author_edits_or_deletes(alice, bob):
    comment = post(alice)
    with pytest.raises(PermissionDenied):
        services.comment_edit(comment_id=comment.comment_id, author_id=str(bob.pk), body="mine now")
    with pytest.raises(PermissionDenied):
        services.comment_delete(comment_id=comment.comment_id, author_id=str(bob.pk))
    assert stored(comment).body == "Hello" and stored(comment).deleted_at is None


def test_a_deleted_comment_without_replies_leaves_the_timeline(alice):
    comment = post(alice, "Oops")
    services.comment_delete(comment_id=comment.comment_id, author_id=str(alice.pk))
    assert timeline_ids() == []
    item = stored(comment)
    assert item.body == "" and item.deleted_at
    assert actions_logged(alice, comment) == ["comment", "delete"]


def test_a_deleted_comment_with_replies_stays_as_deleted_and_keeps_its_thread(alice, bob):
    comment = post(alice, "Start of a thread")
    reply = post(bob, "An answer", parent=comment)
    services.comment_delete(comment_id=comment.comment_id, author_id=str(alice.pk))
    # Listed from indexes AWS updates within about a second (the reply a moment ago too).
    wait_for(lambda: timeline_shown() == [(comment.comment_id, True, "")], what="the tombstone on the timeline")
    wait_for(lambda: reply_ids(comment) == [reply.comment_id], what="the reply under it")


def test_a_deleted_reply_leaves_its_parents_replies(alice, bob):
    comment = post(alice)
    first, second = post(bob, "first", parent=comment), post(bob, "second", parent=comment)
    services.comment_delete(comment_id=first.comment_id, author_id=str(bob.pk))
    wait_for(lambda: reply_ids(comment) == [second.comment_id], what="the deleted reply gone from the replies")


def test_a_deleted_comment_takes_no_edit_like_or_reply_and_a_second_delete_is_404(alice, bob):
    comment = post(alice)
    services.comment_delete(comment_id=comment.comment_id, author_id=str(alice.pk))
    with pytest.raises(NotFound):
        services.comment_edit(comment_id=comment.comment_id, author_id=str(alice.pk), body="back again")
    with pytest.raises(NotFound):
        services.comment_delete(comment_id=comment.comment_id, author_id=str(alice.pk))
    with pytest.raises(NotFound):
        like_add(comment_id=comment.comment_id, user_id=str(bob.pk))
    with pytest.raises(services.ApplicationError) as refused:
        post(bob, "late", parent=comment)
    assert refused.value.field == "parent_id"
    assert stored(comment).body == ""
    assert actions_logged(alice, comment) == ["comment", "delete"]


def test_staff_unhiding_a_deleted_comment_does_not_bring_it_back(alice):
    comment = post(alice, "spam")
    services.comment_set_hidden(comment_id=comment.comment_id, hidden=True)
    services.comment_set_hidden(comment_id=comment.comment_id, hidden=False)
    services.comment_delete(comment_id=comment.comment_id, author_id=str(alice.pk))
    services.comment_set_hidden(comment_id=comment.comment_id, hidden=True)
    services.comment_set_hidden(comment_id=comment.comment_id, hidden=False)
    assert timeline_ids() == [] and stored(comment).body == ""


def test_a_hidden_comment_cannot_be_edited(alice):
    comment = post(alice, "spam")
    services.comment_set_hidden(comment_id=comment.comment_id, hidden=True)
    with pytest.raises(NotFound):
        services.comment_edit(comment_id=comment.comment_id, author_id=str(alice.pk), body="ham")
    assert stored(comment).body == "spam"


def test_a_deleted_comment_leaves_the_ranking(alice, bob, settings):
    settings.COUNTER_AGGREGATION_DELAY = 0.2
    counters.counters_forget_caches()
    kept, gone = post(alice, "kept"), post(alice, "gone")
    like_add(comment_id=kept.comment_id, user_id=str(bob.pk))
    like_add(comment_id=gone.comment_id, user_id=str(bob.pk))
    like_add(comment_id=gone.comment_id, user_id="9")
    aggregate(due_only=False)
    wait_for(lambda: ranked() == [gone.comment_id, kept.comment_id], what="both in the ranking")
    services.comment_delete(comment_id=gone.comment_id, author_id=str(alice.pk))
    assert ranked() == [kept.comment_id]  # at once: the ranking reads its comments consistently
    staff_view = ranking.ranking_top(kind=LIKES, limit=10, include_hidden=True)
    assert [r.comment.id for r in staff_view] == [kept.comment_id]
    counters.counters_forget_caches()


def test_the_reply_notification_of_a_deleted_reply_says_removed(alice, bob, api):
    comment = post(alice)
    reply = post(bob, "Something I regret", parent=comment)
    services.comment_delete(comment_id=reply.comment_id, author_id=str(bob.pk))
    # Someone else's delete: the feed's texts are read eventually consistently (about a second).
    [entry] = wait_for(
        lambda: [e for e in api.as_user(alice).get("/api/feed/").json()["results"] if e["removed"]],
        what="the reply shown as removed",
    )
    assert entry["body"] == REMOVED_REPLY
    assert "Something I regret" not in str(entry)


def test_the_like_notification_of_a_deleted_comment_says_removed(alice, bob, client, fold_likes):
    comment = post(alice, "Liked then deleted")
    like_add(comment_id=comment.comment_id, user_id=str(bob.pk))
    fold_likes()
    services.comment_delete(comment_id=comment.comment_id, author_id=str(alice.pk))
    client.force_login(alice)
    page = client.get("/notifications/").content.decode()
    assert "This comment was removed." in page
    assert "Liked then deleted" not in page


def test_a_like_landing_after_the_delete_notifies_nobody(alice, bob, fold_likes, monkeypatch):
    from actions import likes
    from notifications.models import LikeUnread

    comment = post(alice)
    visible = likes.comment_get_visible(comment_id=comment.comment_id)
    services.comment_delete(comment_id=comment.comment_id, author_id=str(alice.pk))
    # The like read the comment before the delete and commits after it (a like never
    # writes the comment item): its row and count stay, the fold tells nobody.
    monkeypatch.setattr(likes, "comment_get_visible", lambda **kwargs: visible)
    like_add(comment_id=comment.comment_id, user_id=str(bob.pk))
    fold_likes()
    unread = list(LikeUnread.query(str(alice.pk), consistent_read=True))
    assert [int(item.num_likes) for item in unread] in ([], [0])
    assert counters.counter_value(key=counters.counter_key(kind=LIKES, object_id=comment.comment_id)) == 1


# --- API ------------------------------------------------------------------------------


def test_api_patch_edits_and_answers_the_comment(alice, api):
    comment = post(alice, "Helo")
    answer = api.as_user(alice).patch(f"/api/comments/{comment.comment_id}/", {"body": "Hello"}, format="json")
    assert answer.status_code == 200
    body = answer.json()
    assert body["body"] == "Hello" and body["edited_at"] and body["deleted"] is False
    assert body["author"]["username"] == "alice"


def test_api_patch_answers_404_when_a_delete_lands_right_after_the_edit(alice, api, monkeypatch):
    comment = post(alice, "Helo")
    author_write = services._author_write

    def edit_then_deleted(**kwargs):
        author_write(**kwargs)
        services.comment_delete(comment_id=comment.comment_id, author_id=str(alice.pk))

    monkeypatch.setattr(services, "_author_write", edit_then_deleted)
    answer = api.as_user(alice).patch(f"/api/comments/{comment.comment_id}/", {"body": "Hello"}, format="json")
    assert answer.status_code == 404 and answer.json()["code"] == "not_found"


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"body": "   "}, "body"),
        ({"body": "x" * 2001}, "body"),
        ({}, "body"),
        ({"body": "ok", "hidden": True}, "hidden"),
    ],
)
def test_api_patch_bad_input_is_a_400_naming_the_field(alice, api, payload, field):
    comment = post(alice, "Unchanged")
    answer = api.as_user(alice).patch(f"/api/comments/{comment.comment_id}/", payload, format="json")
    assert answer.status_code == 400
    assert field in answer.json()
    assert stored(comment).body == "Unchanged" and stored(comment).edited_at is None


def test_api_someone_elses_comment_is_403_and_unknown_404(alice, bob, api):
    comment = post(alice, "Unchanged")
    as_bob = api.as_user(bob)
    assert as_bob.patch(f"/api/comments/{comment.comment_id}/", {"body": "x"}, format="json").status_code == 403
    assert as_bob.delete(f"/api/comments/{comment.comment_id}/").status_code == 403
    assert as_bob.patch(f"/api/comments/{MISSING}/", {"body": "x"}, format="json").status_code == 404
    assert as_bob.delete("/api/comments/not-an-id/").status_code == 404
    assert stored(comment).body == "Unchanged"


def test_api_anonymous_cannot_edit_or_delete(alice, api):
    comment = post(alice)
    assert api.patch(f"/api/comments/{comment.comment_id}/", {"body": "x"}, format="json").status_code == 401
    assert api.delete(f"/api/comments/{comment.comment_id}/").status_code == 401


def test_api_delete_then_read_shows_a_tombstone_and_a_second_delete_is_404(alice, bob, api):
    comment = post(alice, "Goodbye")
    post(bob, "reply", parent=comment)
    as_alice = api.as_user(alice)
    assert as_alice.delete(f"/api/comments/{comment.comment_id}/").status_code == 204
    shown = api.get(f"/api/comments/{comment.comment_id}/").json()
    assert shown["deleted"] is True and shown["body"] == ""
    assert [c["deleted"] for c in api.get("/api/comments/").json()["results"]] == [True]  # the author's own delete
    wait_for(  # Bob's reply of a moment ago: its index lists it within about a second
        lambda: len(api.get(f"/api/comments/{comment.comment_id}/replies/").json()["results"]) == 1,
        what="the reply listed",
    )
    assert as_alice.delete(f"/api/comments/{comment.comment_id}/").status_code == 404
    assert api.as_user(bob).put(f"/api/comments/{comment.comment_id}/like/").status_code == 404


def test_api_a_deleted_comment_does_not_name_its_author(alice, bob, api):
    comment = post(alice, "Goodbye")
    post(bob, "reply", parent=comment)
    as_alice = api.as_user(alice)
    assert as_alice.delete(f"/api/comments/{comment.comment_id}/").status_code == 204
    listed = as_alice.get("/api/comments/")  # the author's own delete: listed at once
    assert [(c["id"], c["author"]) for c in listed.json()["results"]] == [(comment.comment_id, None)]
    anonymous = Client().get(f"/api/comments/{comment.comment_id}/")
    shown = anonymous.json()
    assert shown["deleted"] is True and shown["author"] is None and shown["body"] == ""
    assert "alice" not in anonymous.content.decode().lower() and "alice" not in listed.content.decode().lower()


# --- pages ----------------------------------------------------------------------------


def test_the_author_sees_edit_and_delete_links_and_others_do_not(alice, bob, client):
    comment = post(alice)
    client.force_login(alice)
    edit_link = f"/c/{comment.comment_id}/edit/"
    wait_for(lambda: edit_link in client.get("/").content.decode(), what="the comment listed with its links")
    client.force_login(bob)
    page = client.get("/").content.decode()
    assert f"/c/{comment.comment_id}/edit/" not in page and f"/c/{comment.comment_id}/delete/" not in page
    assert client.get(f"/c/{comment.comment_id}/edit/").status_code == 403
    assert client.post(f"/c/{comment.comment_id}/delete/").status_code == 403
    assert stored(comment).deleted_at is None


def test_edit_and_delete_forms_work_without_javascript_and_need_csrf(alice, bob):
    comment = post(alice, "Helo")
    reply = post(alice, "my reply", parent=comment)
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    form = browser.get(f"/c/{comment.comment_id}/edit/")
    assert form.status_code == 200 and "Helo" in form.content.decode()
    assert browser.post(f"/c/{comment.comment_id}/edit/", {"body": "Hello"}).status_code == 403  # no token
    token = form.context["csrf_token"]
    saved = browser.post(f"/c/{comment.comment_id}/edit/", {"body": "Hello", "csrfmiddlewaretoken": token})
    assert saved.status_code == 302 and saved["Location"] == f"/c/{comment.comment_id}/"
    page = browser.get(saved["Location"]).content.decode()
    assert "Hello" in page and "edited" in page and "Your comment was saved." in page
    empty = browser.post(f"/c/{comment.comment_id}/edit/", {"body": " ", "csrfmiddlewaretoken": token})
    assert empty.status_code == 200 and "errorlist" in empty.content.decode()
    confirm = browser.get(f"/c/{reply.comment_id}/delete/")
    assert confirm.status_code == 200 and "Delete your comment?" in confirm.content.decode()
    gone = browser.post(f"/c/{reply.comment_id}/delete/", {"csrfmiddlewaretoken": token})
    assert gone.status_code == 302 and gone["Location"] == f"/c/{comment.comment_id}/"
    assert "my reply" not in browser.get(gone["Location"]).content.decode()  # the page it lands on, at once
    wait_for(lambda: reply_ids(comment) == [], what="the reply gone for everyone")
    assert browser.get(f"/c/{reply.comment_id}/edit/").status_code == 404


def test_a_deleted_comment_page_keeps_its_replies_and_takes_no_reply(alice, bob, client):
    comment = post(alice, "The original words")
    post(bob, "Bob's answer", parent=comment)
    services.comment_delete(comment_id=comment.comment_id, author_id=str(alice.pk))
    client.force_login(bob)
    page = page_showing(client, f"/c/{comment.comment_id}/", "Bob's answer")  # listed within about a second
    assert "deleted" in page
    assert "The original words" not in page
    assert 'class="card post-form"' not in page
    like = client.post(f"/c/{comment.comment_id}/like/", {"action": "like", "next": "/"})
    assert like.status_code == 302
    assert "deleted by its author" in client.get(like["Location"]).content.decode()
    assert list(Like.query(comment.comment_id, consistent_read=True)) == []


# --- concurrency ----------------------------------------------------------------------


@pytest.mark.slow
def test_edits_likes_replies_and_a_delete_racing_lose_nothing_and_never_resurrect(make_user, aws_conflicts):
    """Under AWS's conflict rules: the author edits while others like and reply, and the
    author deletes half way. Every like and reply that answered is kept, the delete wins
    over every edit after it, and the log has one line per change that answered."""
    author = make_user("author")
    people = [make_user(f"p{n}") for n in range(6)]
    comment = post(author, "v0")
    errors, edits, replies, refused = [], [], [], []
    deleted = threading.Event()

    def until_answered(change):
        """The author's client sends a change again after a 409 (nothing was written), as it may."""
        while True:
            try:
                return change()
            except Conflict:
                continue

    def editor():
        for n in range(1, 25):
            try:
                until_answered(
                    lambda n=n: services.comment_edit(
                        comment_id=comment.comment_id, author_id=str(author.pk), body=f"v{n}"
                    )
                )
                edits.append(n)
            except NotFound:
                refused.append(n)
            except Exception as error:
                errors.append(error)
            if n == 12:
                try:
                    until_answered(
                        lambda: services.comment_delete(comment_id=comment.comment_id, author_id=str(author.pk))
                    )
                    deleted.set()
                except Exception as error:
                    errors.append(error)

    def visitor(person, seed):
        rng = random.Random(seed)
        for n in range(10):
            try:
                if rng.random() < 0.5:
                    like_add(comment_id=comment.comment_id, user_id=str(person.pk))
                else:
                    replies.append(post(person, f"reply {n}", parent=comment).comment_id)
            except (NotFound, services.ApplicationError):
                pass  # the comment is deleted: refused, nothing written
            except Conflict:
                pass  # answered 409: nothing written
            except Exception as error:
                errors.append(error)

    threads = [threading.Thread(target=editor)]
    threads += [threading.Thread(target=visitor, args=(p, n)) for n, p in enumerate(people)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert deleted.is_set() and aws_conflicts.transactions >= 25
    item = stored(comment)
    assert item.deleted_at and item.body == ""  # no edit after the delete brought it back
    assert edits == list(range(1, 13)) and refused == list(range(13, 25))
    # Every reply that answered is there, under the tombstone (listed within about a second).
    wait_for(lambda: set(reply_ids(comment)) == set(replies), what="every reply under the tombstone")
    # Every like row is counted.
    rows = list(Like.query(comment.comment_id, consistent_read=True))
    assert counters.counter_value(key=counters.counter_key(kind=LIKES, object_id=comment.comment_id)) == len(rows)
    assert actions_logged(author, comment) == ["comment"] + ["edit"] * 12 + ["delete"]


# --- limits ---------------------------------------------------------------------------


def test_edits_and_deletes_share_a_write_limit_and_a_refusal_changes_nothing(alice, api, client, settings):
    settings.RATE_LIMITS_ENABLED = True
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "edit": ("2/hour", "2/hour")}
    comment, other = post(alice, "v0"), post(alice, "keep me")
    as_alice = api.as_user(alice)
    assert as_alice.patch(f"/api/comments/{comment.comment_id}/", {"body": "v1"}, format="json").status_code == 200
    assert as_alice.patch(f"/api/comments/{comment.comment_id}/", {"body": "v2"}, format="json").status_code == 200
    refused = as_alice.patch(f"/api/comments/{comment.comment_id}/", {"body": "v3"}, format="json")
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert as_alice.delete(f"/api/comments/{other.comment_id}/").status_code == 429
    client.force_login(alice)
    page = client.post(f"/c/{comment.comment_id}/edit/", {"body": "typed text"})
    assert page.status_code == 429 and "typed text" in page.content.decode()
    assert client.post(f"/c/{other.comment_id}/delete/").status_code == 429
    assert stored(comment).body == "v2" and stored(other).deleted_at is None
