"""Staff decisions on reported comments: the admin queue and case pages, each action audited
(the comments page's hide, unhide and delete too), and a suspended author locked out."""

from datetime import timedelta

import pytest
from django.utils import timezone
from rest_framework.authtoken.models import Token

from actions.comments import comment_create
from social.models import Comment, ModerationAction, ReportCase
from social.moderation import staff_services
from social.moderation.services import report_create
from tests.trust import established

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def people(make_user, settings):
    settings.REPORT_HIDE_THRESHOLD = 2
    settings.REPORT_STANDING_COMMENTS = 0  # reporters with a verified address and age have standing
    settings.REPORT_THRESHOLD_STEP_DAYS = 0  # the author's age does not raise the threshold
    names = ("author", "r1", "r2", "r3")
    made = {name: make_user(name) for name in names}
    for user in made.values():
        user.date_joined = timezone.now() - timedelta(days=60)
        user.email_verified = True
        user.save(update_fields=["date_joined", "email_verified"])
        established(user)
    made["mod"] = make_user("mod", is_staff=True)
    return made


@pytest.fixture
def staff_client(client, people):
    people["mod"].is_superuser = True
    people["mod"].save(update_fields=["is_superuser"])
    client.force_login(people["mod"])
    return client


def reported(people, body="rude", reporters=("r1",)):
    comment = comment_create(author_id=str(people["author"].pk), body=body)
    for name in reporters:
        report_create(comment_id=comment.comment_id, reporter_id=str(people[name].pk), reason="harassment", note="")
    return comment


def stored(comment) -> Comment:
    return Comment.get(comment.comment_id, consistent_read=True)


def lines():
    return [
        (line.action, line.target_type, line.staff_username, line.outcome)
        for line in ModerationAction.objects.order_by("id")
    ]


def test_the_queue_and_a_case_page_show_reasons_and_reporters(staff_client, people):
    comment = reported(people, "nasty words", reporters=("r1", "r2"))  # hidden by reports at 2
    queue = staff_client.get("/admin/dynamo/reports/?order=most")
    assert queue.status_code == 200
    page = queue.content.decode()
    assert comment.comment_id in page and "Harassment or bullying: 2" in page and "hidden by reports" in page
    case = staff_client.get(f"/admin/dynamo/reports/{comment.comment_id}/").content.decode()
    assert "nasty words" in case and "r1" in case and "r2" in case and "Harassment or bullying" in case
    assert "Reports" in staff_client.get("/admin/").content.decode()
    people["mod"].locale = "ja"  # the reasons in the staff member's language, as the case page names them
    people["mod"].save(update_fields=["locale"])
    japanese = staff_client.get("/admin/dynamo/reports/?order=most").content.decode()
    assert "嫌がらせ" in japanese and "harassment" not in japanese.lower().split("<table")[1]


@pytest.mark.parametrize("action", ["resolve", "hide", "unhide", "delete"])
def test_every_decision_on_a_comment_is_an_audit_line(staff_client, people, action):
    comment = reported(people)
    answer = staff_client.post(
        f"/admin/dynamo/reports/{comment.comment_id}/decide/",
        {"action": action, "note": "looked at it", "confirmed": "yes"},
    )
    assert answer.status_code == 302
    assert lines() == [(action, "comment", "mod", "done")]
    assert ModerationAction.objects.get().detail == "looked at it"
    case = ReportCase.get(comment.comment_id, consistent_read=True)
    assert (case.status, case.decision, case.decided_by, case.queue) == ("closed", action, "mod", None)
    after = stored(comment)
    assert after.hidden == (action in ("hide", "delete"))
    if action == "delete":
        assert after.body == "" and after.deleted_at


@pytest.mark.parametrize("action", ["hide", "delete", "suspend"])
def test_a_decision_taking_something_from_the_author_asks_to_confirm_first(staff_client, people, action):
    comment = reported(people, "borderline")
    url = f"/admin/dynamo/reports/{comment.comment_id}/decide/"
    first = staff_client.post(url, {"action": action, "note": "on reflection"})
    assert first.status_code == 200  # a confirmation page, nothing done
    page = first.content.decode()
    assert 'name="confirmed" value="yes"' in page and 'value="on reflection"' in page and "borderline" in page
    assert lines() == [] and not stored(comment).hidden
    people["author"].refresh_from_db()
    assert people["author"].is_active
    assert staff_client.post(url, {"action": action, "note": "on reflection", "confirmed": "yes"}).status_code == 302
    assert [line[0] for line in lines()] == [action]


def test_the_comments_page_hide_unhide_and_delete_are_audited(staff_client, people):
    comment = comment_create(author_id=str(people["author"].pk), body="never reported")
    url = f"/admin/dynamo/comments/{comment.comment_id}/moderate/"
    for action in ("hide", "unhide", "delete"):
        assert staff_client.post(url, {"action": action, "confirmed": "yes"}).status_code == 302
    assert lines() == [(a, "comment", "mod", "done") for a in ("hide", "unhide", "delete")]
    assert stored(comment).body == ""
    assert not ReportCase.count(comment.comment_id)  # a comment nobody reported gets no case


@pytest.mark.parametrize("action", ["hide", "delete"])
def test_the_comments_page_asks_to_confirm_a_hide_or_delete_first(staff_client, people, action):
    comment = comment_create(author_id=str(people["author"].pk), body="never reported")
    url = f"/admin/dynamo/comments/{comment.comment_id}/moderate/"
    page = staff_client.post(url, {"action": action, "q": "author"})
    assert page.status_code == 200
    text = page.content.decode()
    assert 'name="confirmed" value="yes"' in text and "never reported" in text and "No, go back" in text
    assert lines() == [] and not stored(comment).hidden  # nothing happened yet
    assert staff_client.post(url, {"action": action, "confirmed": "yes", "q": "author"}).status_code == 302
    assert stored(comment).hidden and [line[0] for line in lines()] == [action]


def test_a_failed_action_is_audited_as_failed(staff_client, people):
    missing = "00000000-0000-0000-0000-000000000000"
    staff_client.post(f"/admin/dynamo/comments/{missing}/moderate/", {"action": "hide", "confirmed": "yes"})
    [line] = ModerationAction.objects.all()
    assert (line.action, line.outcome) == ("hide", "failed")


def test_a_suspended_author_cannot_log_in_or_use_their_token_or_session(staff_client, people, api, client):
    from django.test import Client

    comment = reported(people)
    author = people["author"]
    author_session = Client()
    author_session.force_login(author)
    api.as_user(author)
    assert api.get("/api/me/").status_code == 200
    staff_client.post(f"/admin/dynamo/reports/{comment.comment_id}/decide/", {"action": "suspend", "confirmed": "yes"})
    assert lines() == [("suspend", "user", "mod", "done")]
    author.refresh_from_db()
    assert not author.is_active and not Token.objects.filter(user=author).exists()
    assert api.get("/api/me/").status_code == 401  # the token is gone
    assert author_session.get("/me/settings/").status_code == 302  # the session no longer logs in
    assert not Client().login(username="author", password="pw-Secret-123")
    staff_client.post(f"/admin/dynamo/reports/{comment.comment_id}/decide/", {"action": "unsuspend"})
    assert Client().login(username="author", password="pw-Secret-123")
    assert [line[0] for line in lines()] == ["suspend", "unsuspend"]


def test_staff_accounts_are_not_suspended_from_the_queue(people):
    with pytest.raises(Exception, match="Staff accounts"):
        staff_services.user_suspend(user_id=str(people["mod"].pk), staff=people["mod"])
    assert lines() == [("suspend", "user", "mod", "failed")]


def test_the_audit_log_lists_and_filters(staff_client, people):
    comment = reported(people, reporters=("r1", "r2"))  # a hide by reports: no staff
    staff_client.post(f"/admin/dynamo/reports/{comment.comment_id}/decide/", {"action": "unhide"})
    listing = staff_client.get("/admin/social/moderationaction/")
    assert listing.status_code == 200 and "unhide" in listing.content.decode()
    only_unhide = staff_client.get("/admin/social/moderationaction/?action__exact=unhide").context["cl"]
    assert [line.action for line in only_unhide.result_list] == ["unhide"]
    by_target = staff_client.get(f"/admin/social/moderationaction/?q={comment.comment_id}").context["cl"]
    assert sorted(line.source for line in by_target.result_list) == ["admin", "reports"]
    assert staff_client.get("/admin/social/moderationaction/add/").status_code == 403


@pytest.mark.parametrize(
    ("locale", "action", "button"),
    [("ja", "hide", "はい、非表示にする"), ("pl", "delete", "Tak, usuń"), ("ja", "suspend", "はい、停止する")],
)
def test_a_confirmation_button_is_worded_whole_in_the_staff_members_language(
    staff_client, people, locale, action, button
):
    people["mod"].locale = locale
    people["mod"].save(update_fields=["locale"])
    comment = reported(people, "borderline")
    url = f"/admin/dynamo/reports/{comment.comment_id}/decide/"
    if action == "suspend":
        page = staff_client.post(url, {"action": action}).content.decode()
    else:  # the comments page's own confirmation
        page = staff_client.post(
            f"/admin/dynamo/comments/{comment.comment_id}/moderate/", {"action": action}
        ).content.decode()
    assert f'<button type="submit">{button}</button>' in page
