"""/me/notifications/ and the comment page's Mute / Watch buttons, without JavaScript."""

from __future__ import annotations

import pytest
from django.test import Client

from actions.comments import comment_create
from notifications.preferences.selectors import preferences_get, thread_state
from notifications.preferences.services import preferences_update
from social.services import comment_set_hidden
from tests.notifications.helpers import post, uid

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


def _signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _form(page) -> dict[str, str]:
    """The values the settings form would send as shown (checked boxes, hidden fields, chosen digest)."""
    context = page.context["form"]
    data = {}
    for name, field in context.fields.items():
        value = context.initial.get(name)
        if field.disabled:
            continue
        if name.startswith("shown_"):
            data[name] = "on" if value is True else ("" if value is False else value)
        elif name == "digest":
            data[name] = value
        elif value:
            data[name] = "on"
    return data


def test_anonymous_visitors_are_sent_to_log_in():
    client = Client()
    assert client.get("/me/notifications/").status_code == 302
    assert client.post("/me/notifications/threads/", {"action": "unmute", "thread_id": "x"}).status_code == 302


def test_the_page_saves_only_what_was_changed(make_user):
    user = make_user("ann")
    client = _signed_in(user)
    page = client.get("/me/notifications/")
    assert page.status_code == 200
    assert b"Notification settings" in page.content
    data = _form(page)
    # Meanwhile, in another tab (or the API), reply e-mail is turned on.
    preferences_update(user_id=uid(user), patch={"kinds": {"reply": {"email": True}}})
    data.pop("like_inbox")  # this form unticks likes in the inbox
    data["digest"] = "weekly"

    answer = client.post("/me/notifications/", data, follow=True)

    assert b"Saved: your notification settings." in answer.content
    stored = preferences_get(user_id=uid(user), consistent=True)
    assert not stored.wants("like", "inbox")
    assert stored.wants("reply", "email")  # not undone by the form, which showed it off
    assert stored.digest == "weekly"
    assert stored.wants("message", "inbox")


def test_the_page_lists_muted_and_watched_threads_with_undo(make_user):
    user, author = make_user("ann"), make_user("author", display_name="Writer")
    watched, muted = post(author, "A watched thread"), post(author, "A muted thread")
    gone = post(author, "Hidden later")
    client = _signed_in(user)
    # Through the comment pages, in this browser: the list (an index, which trails writes by up
    # to a second on AWS, as aws_read_lag models) shows its own changes at once.
    client.post(f"/c/{watched}/watch/", {"action": "watch"})
    client.post(f"/c/{muted}/mute/", {"action": "mute"})
    client.post(f"/c/{gone}/mute/", {"action": "mute"})
    comment_set_hidden(comment_id=gone, hidden=True)

    page = client.get("/me/notifications/")
    assert [thread.thread_id for thread in page.context["watched"]] == [watched]
    assert {thread.thread_id for thread in page.context["muted"]} == {muted, gone}
    assert b"Writer: A watched thread" in page.content
    assert b"A thread that is no longer shown" in page.content
    assert b"Hidden later" not in page.content

    answer = client.post("/me/notifications/threads/", {"action": "unmute", "thread_id": gone}, follow=True)
    assert b"Unmuted" in answer.content
    assert thread_state(thread_id=gone, user_id=uid(user)) is None
    client.post("/me/notifications/threads/", {"action": "unwatch", "thread_id": watched})
    assert thread_state(thread_id=watched, user_id=uid(user)) is None
    assert client.post("/me/notifications/threads/", {"action": "delete", "thread_id": muted}).status_code == 302
    assert thread_state(thread_id=muted, user_id=uid(user)) == "mute"


def test_the_comment_page_buttons_mute_and_watch_the_thread(make_user):
    user, author = make_user("ann"), make_user("author")
    root = post(author, "A thread")
    reply = comment_create(author_id=uid(author), body="A reply", parent_id=root).comment_id
    client = _signed_in(user)

    page = client.get(f"/c/{reply}/")
    assert b'value="watch"' in page.content and b'value="mute"' in page.content
    answer = client.post(f"/c/{reply}/watch/", {"action": "watch"}, follow=True)
    assert answer.redirect_chain[-1][0] == f"/c/{reply}/"
    assert b"Stop watching" in answer.content
    assert thread_state(thread_id=root, user_id=uid(user)) == "watch"

    answer = client.post(f"/c/{root}/mute/", {"action": "mute"}, follow=True)
    assert b"Unmute" in answer.content and b'value="watch"' in answer.content
    assert thread_state(thread_id=root, user_id=uid(user)) == "mute"
    client.post(f"/c/{root}/mute/", {"action": "unmute"})
    assert thread_state(thread_id=root, user_id=uid(user)) is None


def test_the_buttons_are_not_shown_to_visitors_nor_usable_on_hidden_comments(make_user):
    user, author = make_user("ann"), make_user("author")
    comment_id = post(author, "Soon hidden")
    assert b'value="mute"' not in Client().get(f"/c/{comment_id}/").content
    comment_set_hidden(comment_id=comment_id, hidden=True)

    client = _signed_in(user)
    assert client.post(f"/c/{comment_id}/mute/", {"action": "mute"}).status_code == 404
    assert client.post(f"/c/{comment_id}/watch/", {"action": "watch"}).status_code == 404
    assert client.get(f"/c/{comment_id}/mute/").status_code == 405
    assert thread_state(thread_id=comment_id, user_id=uid(user)) is None
