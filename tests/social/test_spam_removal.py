"""Delete as spam: the account stops at once, its comments are taken down at once, its reports
dismissed, and the account eraser's next pass retracts every like count, notification, mention
and feed entry it caused, exactly as an account deletion does."""

import pytest
from django.contrib.auth import get_user_model

from actions.comments import comment_create
from actions.spam import account_remove_as_spam
from notifications.feed.selectors import feed_entries_list
from notifications.selectors import notification_inbox
from social.account.services import account_deletions_run
from social.counters import LIKES, counter_key, counter_value
from social.models import HeldComment, ModerationAction, ReportCase
from social.moderation.services import report_create
from social.selectors import comment_find
from tests.notifications.helpers import fold, like, uid

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def people(make_user, settings):
    settings.HOLD_FOR_REVIEW_ENABLED = True
    settings.REPORT_STANDING_DAYS = 0
    settings.REPORT_STANDING_COMMENTS = 0
    made = {name: make_user(name, display_name=name.capitalize()) for name in ("spammer", "ann", "bob")}
    made["mod"] = make_user("mod", is_staff=True)
    for user in made.values():
        user.email_verified = True
        user.save(update_fields=["email_verified"])
    return made


def inbox_texts(user) -> list[str]:
    return [item.text for item in notification_inbox(user_id=uid(user), cursor=None, limit=50).results]


def test_every_trace_of_a_spammer_goes(people, api, settings):
    spammer, ann, bob = people["spammer"], people["ann"], people["bob"]
    anns = comment_create(author_id=uid(ann), body="Ann's question")
    reply = comment_create(author_id=uid(spammer), body="Buy now, @bob", parent_id=anns.comment_id)
    top = comment_create(author_id=uid(spammer), body="Cheap stuff for everyone")
    # The spammer is a new account: its link waits for review.
    held = comment_create(author_id=uid(spammer), body="more at https://spam.example")
    assert HeldComment.objects.filter(comment_id=held.comment_id).exists()
    like(spammer, anns.comment_id)
    fold()
    report_create(comment_id=anns.comment_id, reporter_id=uid(spammer), reason="spam")
    assert ReportCase.get(anns.comment_id).open_reporters == 1
    assert inbox_texts(ann) and feed_entries_list(user_id=uid(bob)).results
    assert counter_value(key=counter_key(kind=LIKES, object_id=anns.comment_id)) == 1

    assert api.as_user(bob).post(f"/api/moderation/users/{spammer.pk}/spam/").status_code == 403
    answer = api.as_user(people["mod"]).post(f"/api/moderation/users/{spammer.pk}/spam/")
    assert answer.status_code == 200 and answer.json()["comments_taken_down"] == 3
    # At once: logged out, comments gone from every list, held one deleted, its report dismissed.
    spammer.refresh_from_db()
    assert not spammer.is_active
    assert comment_find(comment_id=top.comment_id).hidden and comment_find(comment_id=reply.comment_id).hidden
    assert comment_find(comment_id=held.comment_id) is None
    api.credentials()
    assert [c["id"] for c in api.get("/api/comments/").json()["results"]] == [anns.comment_id]
    case = ReportCase.get(anns.comment_id, consistent_read=True)
    assert (case.open_reporters, case.score) == (0, 0)
    assert ModerationAction.objects.get(action="spam").outcome == "done"

    # The eraser's next pass: like count, notifications, mention and reply entries retracted.
    assert account_deletions_run() == 1
    fold()
    assert counter_value(key=counter_key(kind=LIKES, object_id=anns.comment_id)) == 0
    assert [text for text in inbox_texts(ann) if "Spammer" in text] == []
    assert [entry for entry in feed_entries_list(user_id=uid(bob)).results if not entry.removed] == []
    assert comment_find(comment_id=top.comment_id).body == ""
    assert not get_user_model().objects.filter(pk=spammer.pk).exists()
    # Twice: nothing more (the account is gone: 404).
    assert api.as_user(people["mod"]).post(f"/api/moderation/users/{spammer.pk}/spam/").status_code == 404


def test_staff_are_not_deleted_as_spam(people):
    from project.errors import PermissionDenied

    with pytest.raises(PermissionDenied):
        account_remove_as_spam(user_id=uid(people["mod"]), staff=people["mod"])


def test_the_admin_button_asks_once_more_then_deletes_as_spam(people, client, settings):
    spammer = people["spammer"]
    held = comment_create(author_id=uid(spammer), body="deals at https://spam.example/x today")
    staff = people["mod"]
    staff.is_superuser = True
    staff.save(update_fields=["is_superuser"])
    client.force_login(staff)
    url = f"/admin/social/heldcomment/{held.comment_id}/spam/"
    asked = client.post(url)
    assert asked.status_code == 200 and "Delete spammer as spam?" in asked.content.decode()
    spammer.refresh_from_db()
    assert spammer.is_active  # nothing done yet
    done = client.post(url, {"confirmed": "yes"})
    assert done.status_code == 302
    spammer.refresh_from_db()
    assert not spammer.is_active and comment_find(comment_id=held.comment_id) is None
