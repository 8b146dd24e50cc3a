"""Moderation decisions reach the people they concern: the author of a hidden comment (and of one
shown again), each reporter once when staff decide, a retried decision notifying nobody twice."""

from datetime import timedelta

import pytest
from django.utils import timezone

from actions.comments import comment_create
from notifications.feed.selectors import feed_entries_list
from notifications.feed.services import feed_retries_process
from notifications.outbox import OUTBOX_DELAY_MS
from project.clock import ManualClock, clock_override
from social.moderation import services as moderation_services
from social.moderation import staff_services
from social.moderation.services import report_create
from tests.trust import established

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def people(make_user, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    settings.REPORT_HIDE_THRESHOLD = 2
    settings.REPORT_STANDING_COMMENTS = 0
    settings.REPORT_THRESHOLD_STEP_DAYS = 0
    made = {name: make_user(name) for name in ("author", "r1", "r2")}
    for user in made.values():
        user.date_joined = timezone.now() - timedelta(days=60)
        user.email_verified = True
        user.save(update_fields=["date_joined", "email_verified"])
        established(user)
    made["mod"] = make_user("mod", is_staff=True)
    return made


def notices(user):
    return [(entry.kind, entry.title, entry.body) for entry in feed_entries_list(user_id=str(user.pk)).results]


def reported(people, reporters=("r1",)):
    comment = comment_create(author_id=str(people["author"].pk), body="Something the reporters disliked")
    for name in reporters:
        report_create(comment_id=comment.comment_id, reporter_id=str(people[name].pk), reason="spam", note="")
    return comment


def test_the_author_is_told_of_a_hide_and_of_the_restore_once_each(people):
    comment = reported(people)
    staff_services.comment_hide_by_staff(comment_id=comment.comment_id, staff=people["mod"])
    staff_services.comment_hide_by_staff(comment_id=comment.comment_id, staff=people["mod"])  # a retry
    [(kind, title, body)] = notices(people["author"])
    assert (kind, title) == ("moderation", "Your comment was hidden")
    assert "Something the reporters disliked" in body and "by the moderators" in body and "mistake" in body
    staff_services.comment_unhide_by_staff(comment_id=comment.comment_id, staff=people["mod"])
    staff_services.comment_unhide_by_staff(comment_id=comment.comment_id, staff=people["mod"])  # a retry
    assert [title for _, title, _ in notices(people["author"])] == [
        "Your comment is visible again",
        "Your comment was hidden",
    ]
    staff_services.comment_hide_by_staff(comment_id=comment.comment_id, staff=people["mod"])  # hidden anew: told anew
    assert next(title for _, title, _ in notices(people["author"])) == "Your comment was hidden"
    assert len(notices(people["author"])) == 3


def test_the_author_is_told_when_reports_hide_the_comment(people):
    reported(people, reporters=("r1", "r2"))
    [(kind, _title, body)] = notices(people["author"])
    assert kind == "moderation" and "after several people reported it" in body
    assert notices(people["r1"]) == [] and notices(people["r2"]) == []  # staff have not decided yet


@pytest.mark.parametrize(("decide", "word"), [("hide", "hid it"), ("resolve", "stays up")])
def test_each_reporter_is_told_once_when_staff_decide(people, decide, word):
    comment = reported(people, reporters=("r1",))
    decision = staff_services.comment_hide_by_staff if decide == "hide" else staff_services.case_resolve
    decision(comment_id=comment.comment_id, staff=people["mod"])
    decision(comment_id=comment.comment_id, staff=people["mod"])  # a retry
    [(kind, _title, body)] = notices(people["r1"])
    assert kind == "moderation" and word in body
    assert "author" not in body and "disliked" not in body  # nothing of the author or their text
    assert notices(people["r2"]) == []  # did not report it


def test_the_authors_own_profile_shows_their_hidden_comment_marked_and_nobody_elses_does(client, people):
    comment = reported(people)
    staff_services.comment_hide_by_staff(comment_id=comment.comment_id, staff=people["mod"])
    client.force_login(people["author"])
    own = client.get("/u/author/").content.decode()
    assert "Hidden by the moderators" in own and "Something the reporters disliked" in own
    client.force_login(people["r1"])
    other = client.get("/u/author/").content.decode()
    assert "Hidden by the moderators" not in other and "Something the reporters disliked" not in other


class Died(BaseException):
    """The process ends here (not an Exception: nothing catches it)."""


def _dies(*args, **kwargs):
    raise Died


@pytest.fixture
def manual():
    with clock_override(ManualClock()) as clock:
        yield clock


def drain_due(clock) -> None:
    """`process_feed_retries` once every promise recorded is due."""
    clock.advance(OUTBOX_DELAY_MS / 1000)
    feed_retries_process()


def test_a_staff_decision_whose_process_dies_before_telling_anyone_is_told_by_the_drainer(people, manual, monkeypatch):
    comment = reported(people, reporters=("r1",))
    monkeypatch.setattr(staff_services, "_decided", _dies)
    with pytest.raises(Died):
        staff_services.comment_hide_by_staff(comment_id=comment.comment_id, staff=people["mod"])
    assert notices(people["author"]) == [] and notices(people["r1"]) == []  # the decision stands, untold
    drain_due(manual)
    assert [title for _, title, _ in notices(people["author"])] == ["Your comment was hidden"]
    assert [title for _, title, _ in notices(people["r1"])] == ["Your report was looked at"]
    monkeypatch.undo()
    staff_services.comment_hide_by_staff(comment_id=comment.comment_id, staff=people["mod"])  # staff retry
    drain_due(manual)
    assert len(notices(people["author"])) == 1 and len(notices(people["r1"])) == 1  # told once


def test_a_hide_by_reports_whose_process_dies_before_telling_the_author_is_told_by_the_drainer(
    people, manual, monkeypatch
):
    monkeypatch.setattr(moderation_services, "_tell_author", _dies)
    with pytest.raises(Died):
        reported(people, reporters=("r1", "r2"))
    assert notices(people["author"]) == []
    drain_due(manual)
    [(kind, _title, body)] = notices(people["author"])
    assert kind == "moderation" and "after several people reported it" in body


def test_a_staff_decision_that_died_before_its_write_tells_nobody(people, manual, monkeypatch):
    comment = reported(people, reporters=("r1",))
    monkeypatch.setattr(staff_services, "comment_set_hidden", _dies)
    with pytest.raises(Died):
        staff_services.comment_hide_by_staff(comment_id=comment.comment_id, staff=people["mod"])
    drain_due(manual)
    assert notices(people["author"]) == [] and notices(people["r1"]) == []
