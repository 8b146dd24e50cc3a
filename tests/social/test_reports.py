"""Reports: one per person, exact counts under concurrent reporters, the threshold (reporters
without standing counting nothing, growing with the author's standing) hiding once until staff
decide, the API's answers and the per-reporter limit."""

from datetime import timedelta

import pytest
from django.utils import timezone

from actions.comments import comment_create
from project.testing.harness import in_threads
from social import services as social_services
from social.models import Comment, ModerationAction, Report, ReportCase
from social.moderation import selectors, staff_services
from social.moderation.services import report_create
from tests.trust import established

pytestmark = pytest.mark.django_db(transaction=True)

MISSING = "00000000-0000-0000-0000-000000000000"


@pytest.fixture(autouse=True)
def plain_standing(settings):
    """Most tests here are about counting: a verified 60-day-old account has standing without
    comments, and the author's age does not raise the threshold (the standing tests set both)."""
    settings.REPORT_STANDING_COMMENTS = 0
    settings.REPORT_THRESHOLD_STEP_DAYS = 0


def aged(user, days, *, verified=True):
    user.date_joined = timezone.now() - timedelta(days=days)
    user.email_verified = verified
    user.save(update_fields=["date_joined", "email_verified"])
    return user


@pytest.fixture
def seasoned(make_user):
    """Verified, established accounts older than REPORT_STANDING_DAYS: their reports count fully."""

    def make(name, days=60):
        return established(aged(make_user(name), days))

    return make


@pytest.fixture
def threshold(settings):
    def set_to(reporters):
        settings.REPORT_HIDE_THRESHOLD = reporters

    return set_to


def post(user, body="Something rude"):
    return comment_create(author_id=str(user.pk), body=body)


def report(user, comment, reason="spam", note=""):
    return report_create(comment_id=comment.comment_id, reporter_id=str(user.pk), reason=reason, note=note)


def case(comment) -> ReportCase:
    return ReportCase.get(comment.comment_id, consistent_read=True)


def stored(comment) -> Comment:
    return Comment.get(comment.comment_id, consistent_read=True)


def test_one_report_per_person_and_again_answers_the_first(seasoned):
    author, reader = seasoned("author"), seasoned("reader")
    comment = post(author)
    first = report(reader, comment, reason="harassment", note="  calls me   names ")
    again = report(reader, comment, reason="spam")
    assert (first.created, again.created) == (True, False)
    assert (again.reason, again.note, again.reported_at) == ("harassment", "calls me names", first.reported_at)
    assert (case(comment).reporters, case(comment).open_reporters, case(comment).reason_harassment) == (1, 1, 1)
    assert case(comment).reason_spam is None
    assert [r.reporter_id for r in Report.query(comment.comment_id, consistent_read=True)] == [str(reader.pk)]


def test_concurrent_reports_by_one_person_count_once(seasoned, threshold):
    threshold(2)
    author, reader = seasoned("author"), seasoned("reader")
    comment = post(author)
    states = in_threads(lambda n: report(reader, comment, reason="spam"), 8)
    assert sum(state.created for state in states) == 1
    assert (case(comment).reporters, case(comment).score, case(comment).reason_spam) == (1, 100, 1)
    assert not stored(comment).hidden  # one person is never two reporters


def test_concurrent_reporters_are_counted_exactly_and_hide_once(seasoned, threshold, aws_conflicts):
    threshold(3)
    author = seasoned("author")
    reporters = [seasoned(f"reader{n}") for n in range(8)]
    comment = post(author)
    states = in_threads(lambda n: report(reporters[n], comment, reason="hate" if n % 2 else "spam"), 8)
    assert all(state.created for state in states)
    assert sum(state.hid_comment for state in states) == 1  # exactly one report crossed the threshold
    stored_case = case(comment)
    assert (stored_case.reporters, stored_case.open_reporters, stored_case.score) == (8, 8, 800)
    assert (stored_case.reason_spam, stored_case.reason_hate) == (4, 4)
    assert stored_case.hidden_by_reports_at is not None
    hidden = stored(comment)
    assert (hidden.hidden, hidden.hidden_by, hidden.timeline_key) == (True, "reports", None)
    lines = ModerationAction.objects.filter(target_id=comment.comment_id)
    assert [(line.action, line.source, line.staff) for line in lines] == [("hide", "reports", None)]


def test_reporters_without_standing_count_nothing_towards_the_threshold(make_user, seasoned, threshold):
    threshold(2)
    author = seasoned("author")
    comment = post(author)
    newcomers = [make_user(f"new{n}") for n in range(4)]  # joined just now, address unverified
    unverified = aged(make_user("unverified"), 60, verified=False)
    for person in [*newcomers, unverified]:
        assert not report(person, comment).hid_comment
    assert not stored(comment).hidden
    assert (case(comment).reporters, case(comment).score) == (5, 0)  # recorded, weighing nothing
    assert not report(seasoned("old1"), comment).hid_comment
    assert report(seasoned("old2"), comment).hid_comment  # two with standing make 2
    flags = {view.reporter.username: view.counted for view in selectors.case_reports(comment_id=comment.comment_id)}
    assert flags == {"new0": False, "new1": False, "new2": False, "new3": False, "unverified": False} | {
        "old1": True,
        "old2": True,
    }


def test_ten_fresh_accounts_from_two_addresses_hide_nothing(api, make_user, seasoned, settings):
    """The figures of the attack: 10 sign-ups from 2 network addresses, verified and each having
    written 3 comments, report a new author's comment within the hour (shipped settings)."""
    settings.REPORT_STANDING_COMMENTS = 3
    settings.REPORT_THRESHOLD_STEP_DAYS = 30
    author = aged(make_user("author"), 2)
    comment = post(author)
    throwaways = []
    for n in range(10):
        person = aged(make_user(f"throwaway{n}"), 0)
        for k in range(3):
            post(person, f"filler {k}")
        throwaways.append(person)
    for person in throwaways:
        url = f"/api/comments/{comment.comment_id}/report/"
        answer = api.as_user(person).post(url, {"reason": "spam"}, format="json", REMOTE_ADDR=f"203.0.113.{n % 2 + 1}")
        assert answer.status_code == 200
    assert not stored(comment).hidden
    assert (case(comment).reporters, case(comment).status) == (10, "open")  # staff still see all ten
    # Five reporters with standing (verified, two weeks old, three comments) do hide it.
    for n in range(5):
        person = seasoned(f"regular{n}", days=20)
        for k in range(3):
            post(person, f"regular {k}")
        assert report(person, comment).hid_comment == (n == 4)
    assert stored(comment).hidden


def test_a_staff_or_long_standing_authors_comment_is_queued_never_hidden_by_reports(make_user, seasoned, settings):
    settings.REPORT_STANDING_DAYS = 7
    staff_author = make_user("staffer", is_staff=True)
    veteran = seasoned("veteran", days=400)
    by_staff, by_veteran = post(staff_author, "a ruling"), post(veteran, "an opinion")
    week_old = [seasoned(f"week{n}", days=8) for n in range(20)]  # standing, under these settings
    for person in week_old:
        assert not report(person, by_staff).hid_comment
        assert not report(person, by_veteran).hid_comment
    assert not stored(by_staff).hidden and not stored(by_veteran).hidden
    assert (case(by_staff).reporters, case(by_staff).score) == (20, 2000)  # counted exactly
    queued = {c.comment_id for c in selectors.report_queue().results}
    assert {by_staff.comment_id, by_veteran.comment_id} <= queued


def test_the_threshold_grows_with_the_authors_standing(make_user, seasoned, threshold, settings):
    threshold(2)
    settings.REPORT_THRESHOLD_STEP_DAYS = 30
    newcomer, established = seasoned("newcomer", days=1), seasoned("established", days=95)
    fresh, settled = post(newcomer, "fresh"), post(established, "settled")
    reporters = [seasoned(f"r{n}") for n in range(5)]
    hid = [report(person, settled).hid_comment for person in reporters]
    assert hid == [False, False, False, False, True]  # 2 + 95 // 30 = 5
    assert [report(person, fresh).hid_comment for person in reporters[:2]] == [False, True]
    assert (
        ModerationAction.objects.get(target_id=settled.comment_id).detail == "hidden by reports (threshold 5 reporters)"
    )


def test_a_comment_hidden_by_reports_stays_hidden_until_staff_decide(api, seasoned, threshold, make_user):
    threshold(2)
    author, staff = seasoned("author"), make_user("mod", is_staff=True)
    comment = post(author)
    report(seasoned("r1"), comment)
    report(seasoned("r2"), comment)
    assert api.get(f"/api/comments/{comment.comment_id}/").status_code == 404
    # Resolving agrees with the reports: it stays hidden and leaves the queue.
    staff_services.case_resolve(comment_id=comment.comment_id, staff=staff)
    assert stored(comment).hidden and case(comment).status == "closed"
    assert selectors.report_queue().results == []
    # Unhiding keeps it visible for good: more reports reopen the case but never hide it again.
    staff_services.comment_unhide_by_staff(comment_id=comment.comment_id, staff=staff)
    assert api.get(f"/api/comments/{comment.comment_id}/").status_code == 200
    for name in ("r3", "r4", "r5"):
        report(seasoned(name), comment)
    assert not stored(comment).hidden
    assert (case(comment).status, case(comment).open_reporters, case(comment).reporters) == ("open", 3, 5)
    assert [c.comment_id for c in selectors.report_queue().results] == [comment.comment_id]


def test_a_staff_hide_is_told_apart_from_a_hide_by_reports(seasoned, make_user, threshold):
    threshold(1)
    author, staff = seasoned("author"), make_user("mod", is_staff=True)
    by_reports, by_staff = post(author, "one"), post(author, "two")
    report(seasoned("r1"), by_reports)
    staff_services.comment_hide_by_staff(comment_id=by_staff.comment_id, staff=staff)
    assert (stored(by_reports).hidden_by, stored(by_staff).hidden_by) == ("reports", "staff")
    staff_services.comment_unhide_by_staff(comment_id=by_reports.comment_id, staff=staff)
    assert stored(by_reports).hidden_by is None


def test_the_queue_lists_open_cases_newest_first_and_most_reported_first(seasoned, threshold):
    threshold(50)
    author = seasoned("author")
    quiet, loud, late = post(author, "quiet"), post(author, "loud"), post(author, "late")
    people = [seasoned(f"r{n}") for n in range(4)]
    report(people[0], quiet)
    for person in people[:3]:
        report(person, loud)
    report(people[3], late)
    newest = [c.comment_id for c in selectors.report_queue(order="newest").results]
    assert newest == [late.comment_id, loud.comment_id, quiet.comment_id]
    most = selectors.report_queue(order="most").results
    assert most[0].comment_id == loud.comment_id and most[0].open_reporters == 3
    assert most[0].reasons == {"spam": 3}
    first = selectors.report_queue(order="newest", limit=2)
    rest = selectors.report_queue(order="newest", limit=2, cursor=first.next_cursor)
    assert [c.comment_id for c in first.results + rest.results] == newest and rest.next_cursor is None


# --- the API ----------------------------------------------------------------------------------


def test_the_report_api_answers_the_same_twice(api, seasoned):
    author, reader = seasoned("author"), seasoned("reader")
    comment = post(author)
    url = f"/api/comments/{comment.comment_id}/report/"
    first = api.as_user(reader).post(url, {"reason": "spam", "note": "buy now"}, format="json")
    again = api.as_user(reader).post(url, {"reason": "spam", "note": "buy now"}, format="json")
    assert first.status_code == again.status_code == 200
    assert first.json() == again.json()
    assert first.json()["reason"] == "spam" and first.json()["comment_id"] == comment.comment_id


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({"reason": "boring"}, "reason"),
        ({}, "reason"),
        ({"reason": "spam", "note": "x" * 501}, "note"),
        ({"reason": "spam", "severity": 5}, "severity"),
    ],
)
def test_a_bad_report_is_a_400_naming_the_field(api, seasoned, payload, field):
    comment = post(seasoned("author"))
    answer = api.as_user(seasoned("reader")).post(f"/api/comments/{comment.comment_id}/report/", payload, format="json")
    assert answer.status_code == 400
    assert field in answer.json()
    assert not ReportCase.count(comment.comment_id)


def test_hidden_deleted_and_unknown_comments_are_404(api, seasoned, make_user):
    author, reader = seasoned("author"), seasoned("reader")
    hidden, deleted = post(author, "hidden"), post(author, "deleted")
    social_services.comment_set_hidden(comment_id=hidden.comment_id, hidden=True)
    social_services.comment_delete(comment_id=deleted.comment_id, author_id=str(author.pk))
    client = api.as_user(reader)
    for comment_id in (hidden.comment_id, deleted.comment_id, MISSING, "not-an-id"):
        answer = client.post(f"/api/comments/{comment_id}/report/", {"reason": "spam"}, format="json")
        assert answer.status_code == 404, comment_id
    own = api.as_user(author).post(
        f"/api/comments/{post(author).comment_id}/report/", {"reason": "spam"}, format="json"
    )
    assert own.status_code == 400


def test_anonymous_people_cannot_report(api, seasoned):
    comment = post(seasoned("author"))
    assert api.post(f"/api/comments/{comment.comment_id}/report/", {"reason": "spam"}, format="json").status_code == 401


def test_reports_per_reporter_are_limited(api, seasoned, settings):
    settings.RATE_LIMITS_ENABLED = True
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "report": ("3/hour", "1/hour")}
    author, reader = seasoned("author"), seasoned("reader")
    comments = [post(author, f"c{n}") for n in range(4)]
    client = api.as_user(reader)
    answers = [
        client.post(f"/api/comments/{c.comment_id}/report/", {"reason": "spam"}, format="json").status_code
        for c in comments
    ]
    assert answers == [200, 200, 200, 429]
    # A repeat of a report made is answered without spending the limit.
    assert (
        client.post(f"/api/comments/{comments[0].comment_id}/report/", {"reason": "spam"}, format="json").status_code
        == 200
    )


def test_the_queue_api_is_for_staff_only(api, seasoned, make_user, threshold):
    threshold(10)
    author = seasoned("author")
    comment = post(author, "loud")
    report(seasoned("r1"), comment, reason="violence")
    assert api.get("/api/moderation/reports/").status_code == 401
    assert api.as_user(seasoned("someone")).get("/api/moderation/reports/").status_code == 403
    staff = api.as_user(make_user("mod", is_staff=True))
    answer = staff.get("/api/moderation/reports/?order=most")
    assert answer.status_code == 200
    [row] = answer.json()["results"]
    assert row["comment"]["id"] == comment.comment_id and row["comment"]["author"]["username"] == "author"
    assert (row["reporters"], row["reasons"], row["comment"]["hidden"]) == (1, {"violence": 1}, False)
    assert answer.json()["next"] is None
    assert staff.get("/api/moderation/reports/?order=loudest").status_code == 400
    assert "order" in staff.get("/api/moderation/reports/?order=loudest").json()
