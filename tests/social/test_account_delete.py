"""Deleting one's account: the request (DELETE /api/me/, the page) and the eraser's work."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token

from actions.comments import comment_create
from notifications.models import Feed, LikeNotified, LikeRead, LikeUnread, UnreadCount
from notifications.preferences.services import preferences_update, thread_mute
from notifications.selectors import notification_inbox
from project.identity.erasure import erasure_steps
from social.account.services import account_delete_request, account_deletions_run
from social.counters import LIKES, counter_key, counter_value
from social.models import AccountDeletion, Comment, Like, Relation, Report
from social.moderation.selectors import case_get, case_reports, report_of
from social.moderation.services import report_create
from social.relations.selectors import relation_get
from social.selectors import comment_find
from tests.notifications.helpers import fold, like, post, uid

PASSWORD = "pw-Secret-123"
REPORTS_FILED = 27  # more than one page of the reports step (social/erasure.py PAGE)


@pytest.fixture(autouse=True)
def no_delay(settings):
    settings.ACCOUNT_DELETION_DELAY_SECONDS = 0


@pytest.fixture
def alice(make_user):
    return make_user("alice", display_name="Alice")


@pytest.fixture
def bob(make_user):
    return make_user("bob", display_name="Bob")


@pytest.fixture
def carol(make_user):
    return make_user("carol", display_name="Carol")


def like_text(author) -> str:
    page = notification_inbox(user_id=uid(author), cursor=None, limit=20)
    return next(item.text for item in page.results if item.unread and item.kind == "like")


def test_a_wrong_password_is_a_400_naming_it_and_a_failed_log_in(api, alice, settings):
    answer = api.as_user(alice).delete("/api/me/", {"password": "not-it"}, format="json")
    assert answer.status_code == 400
    assert "password" in answer.json()
    alice.refresh_from_db()
    assert alice.is_active and not AccountDeletion.objects.exists()
    # Counted in the log-in limits: past the account's budget from this address, 429 without a check.
    answers = [api.delete("/api/me/", {"password": "not-it"}, format="json").status_code for _ in range(12)]
    assert 429 in answers
    assert api.delete("/api/me/", {"password": PASSWORD}, format="json").status_code == 429
    alice.refresh_from_db()
    assert alice.is_active


def test_the_request_stops_every_log_in_at_once(api, client, alice):
    client.force_login(alice)
    token = api.as_user(alice)
    answer = token.delete("/api/me/", {"password": PASSWORD}, format="json")
    assert answer.status_code == 202, answer.content
    assert answer.json()["status"] == "deletion_requested"
    alice.refresh_from_db()
    assert not alice.is_active and not alice.has_usable_password()
    assert not Token.objects.filter(user=alice).exists()
    assert AccountDeletion.objects.get(user_id=alice.pk).finished_at is None
    # The old token, the other session and a fresh log-in all fail.
    assert token.get("/api/me/").status_code == 401
    assert client.get("/me/settings/").status_code == 302
    api.credentials()
    assert api.post("/api/auth/token/", {"username": "alice", "password": PASSWORD}).status_code == 400
    # Twice: the same request.
    assert AccountDeletion.objects.count() == 1


def test_staff_accounts_are_refused(api, make_user):
    staff = make_user("boss", is_staff=True)
    assert api.as_user(staff).delete("/api/me/", {"password": PASSWORD}, format="json").status_code == 403
    staff.refresh_from_db()
    assert staff.is_active


def test_the_eraser_removes_what_is_theirs_and_keeps_the_threads(api, alice, bob, carol):
    # Bob's comment is liked by Alice and Carol: "Alice and Carol liked your comment".
    bobs = post(bob, "Bob's comment")
    like(alice, bobs)
    like(carol, bobs)
    assert like_text(bob) == "Alice and Carol liked your comment"
    # Alice wrote a comment Bob replied to, another nobody answered, and was liked and replied to.
    answered = post(alice, "Alice, answered")
    lonely = post(alice, "Alice, alone")
    comment_create(author_id=uid(bob), body="Bob's reply", parent_id=answered)
    like(bob, answered)
    comment_create(author_id=uid(carol), body="Carol's reply to Bob", parent_id=bobs)
    preferences_update(user_id=uid(alice), patch={"kinds": {"reply": {"email": True}}})
    thread_mute(user_id=uid(alice), thread_id=bobs)
    Relation(uid(alice), uid(carol), blocked_at=1).save()
    assert Feed.get(uid(alice), consistent_read=True)
    alice_id = uid(alice)

    assert api.as_user(alice).delete("/api/me/", {"password": PASSWORD}, format="json").status_code == 202
    assert account_deletions_run() == 1

    # The like left the count and Bob's notification: Carol alone.
    assert counter_value(key=counter_key(kind=LIKES, object_id=bobs)) == 1
    assert like_text(bob) == "Carol liked your comment"
    assert not list(Like.by_user.query(alice_id))
    assert LikeNotified.count(bobs, LikeNotified.user_id == alice_id) == 0
    # Her comments are emptied; the one with a reply stays in the thread, the other leaves the lists.
    kept, gone = comment_find(comment_id=answered), comment_find(comment_id=lonely)
    assert kept.body == "" and kept.deleted_at and kept.timeline_key
    assert gone.body == "" and gone.deleted_at and not gone.timeline_key
    api.credentials()
    shown = api.get(f"/api/comments/{answered}/").json()
    assert shown["author"] is None and shown["body"] == ""
    # Bob's like on her comment still counts (an aggregate of others' likes).
    assert counter_value(key=counter_key(kind=LIKES, object_id=answered)) == 1
    # Her notifications, feed, preferences, relations, account row: gone.
    for model in (LikeUnread, LikeRead, UnreadCount):
        assert not list(model.query(alice_id, consistent_read=True))
    assert Feed.count(alice_id, consistent_read=True) == 0
    assert not list(Relation.query(alice_id, consistent_read=True))
    assert not get_user_model().objects.filter(pk=alice.pk).exists()
    deletion = AccountDeletion.objects.get(user_id=alice.pk)
    assert deletion.finished_at and deletion.step == "done"
    # Bob's own items are untouched.
    assert Comment.get(bobs).body == "Bob's comment"
    # A second run finds nothing to do.
    assert account_deletions_run() == 0


def test_every_step_is_idempotent_when_run_twice(api, alice, bob, carol):
    """Each step run once more with the cursor it started from (a crash before its progress was
    stored) changes nothing twice: counts stay exact."""
    comments = [post(bob, f"Bob {n}") for n in range(3)]
    for comment_id in comments:
        like(alice, comment_id)
        like(carol, comment_id)
    post(alice, "Alice's")
    fold()
    for step in erasure_steps():
        cursor = None
        while True:
            following = step.run(user_id=uid(alice), cursor=cursor)
            step.run(user_id=uid(alice), cursor=cursor)  # the same unit again
            if following is None:
                break
            cursor = following
    fold()
    for comment_id in comments:
        assert counter_value(key=counter_key(kind=LIKES, object_id=comment_id)) == 1
    assert like_text(bob).startswith("Carol")


def test_the_page_deletes_with_the_password(client, alice):
    client.force_login(alice)
    assert b"Delete your account" in client.get("/me/settings/").content
    page = client.get("/me/delete/")
    assert page.status_code == 200 and b"Kept:" in page.content
    wrong = client.post("/me/delete/", {"password": "nope"})
    assert wrong.status_code == 200 and b"That is not your password." in wrong.content
    done = client.post("/me/delete/", {"password": PASSWORD})
    assert done.status_code == 200 and b"Your account is deleted" in done.content
    assert client.get("/me/settings/").status_code == 302
    assert not client.login(username="alice", password=PASSWORD)


def test_the_reports_they_filed_go_and_the_cases_counts_stay(api, alice, bob, carol):
    """More than one eraser page (PAGE 25) of Alice's reports: every one leaves the `reports`
    table and its `by_reporter` index; Bob's report of the same comment stays, and the case
    keeps counting both reporters and both reasons (staff's aggregate record)."""
    reported = [post(carol, f"Carol {n}") for n in range(REPORTS_FILED)]
    for comment_id in reported:
        report_create(comment_id=comment_id, reporter_id=uid(alice), reason="spam", note="Alice's words")
    report_create(comment_id=reported[0], reporter_id=uid(bob), reason="harassment")
    assert len(list(Report.by_reporter.query(uid(alice)))) == REPORTS_FILED
    before = case_get(comment_id=reported[0])
    assert before is not None and before.reporters == 2

    assert api.as_user(alice).delete("/api/me/", {"password": PASSWORD}, format="json").status_code == 202
    assert account_deletions_run() == 1

    assert list(Report.by_reporter.query(uid(alice))) == []
    assert all(report_of(comment_id=comment_id, reporter_id=uid(alice)) is None for comment_id in reported)
    assert [view.reporter.username for view in case_reports(comment_id=reported[0]) if view.reporter] == ["bob"]
    case = case_get(comment_id=reported[0])
    assert case is not None
    assert (case.reporters, case.open_reporters, case.reasons) == (2, 2, {"spam": 1, "harassment": 1})
    assert case.score == before.score
    others = [case_get(comment_id=comment_id) for comment_id in reported[1:]]
    assert [view.reporters if view else None for view in others] == [1] * (REPORTS_FILED - 1)


def test_someone_who_blocked_them_still_has_a_working_list(client, api, alice, bob, carol, monkeypatch):
    """Bob blocked and muted Alice; her account is erased (her row gone, his item naming her
    kept: nothing indexes items by whom they name). His /me/people/ and the API list leave her
    out, and she takes no room on his full list."""
    for kind in ("block", "mute"):
        assert api.as_user(bob).put(f"/api/users/alice/{kind}/").status_code == 200
    assert api.as_user(bob).put("/api/users/carol/mute/").status_code == 200
    assert api.as_user(alice).delete("/api/me/", {"password": PASSWORD}, format="json").status_code == 202
    assert account_deletions_run() == 1
    assert relation_get(user_id=uid(bob), other_id=str(alice.pk)).blocked  # the item stays

    client.force_login(bob)
    page = client.get("/me/people/")
    assert page.status_code == 200
    assert b"You blocked nobody." in page.content and b"@carol" in page.content
    assert b"alice" not in page.content.lower()
    assert api.as_user(bob).get("/api/me/relations/").json() == {
        "results": [{"username": "carol", "blocked": False, "muted": True}]
    }
    monkeypatch.setattr("social.relations.services.RELATIONS_MAX", 2)  # Alice's item and Carol's
    for name in ("dave", "erin"):
        get_user_model().objects.create_user(username=name, password=PASSWORD)
    assert api.as_user(bob).put("/api/users/dave/mute/").status_code == 200
    full = api.as_user(bob).put("/api/users/erin/mute/")  # Carol and Dave: full
    assert full.status_code == 400 and "at most" in str(full.json())


def test_others_see_a_deleted_account_at_once_without_a_link(client, alice, bob, settings):
    """From the request on, before the eraser has run: "deleted account", no dead profile link."""
    settings.ACCOUNT_DELETION_DELAY_SECONDS = 60
    comment = post(alice, "Leaving soon")
    client.force_login(bob)
    assert 'href="/u/alice/"' in client.get(f"/c/{comment}/").content.decode()
    account_delete_request(user=alice, password=PASSWORD, address="192.0.2.1")
    page = client.get(f"/c/{comment}/").content.decode()
    assert "Leaving soon" in page  # the eraser has not run yet
    assert 'href="/u/alice/"' not in page and "Alice" not in page
    assert "deleted account" in page
