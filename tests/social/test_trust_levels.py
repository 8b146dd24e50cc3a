"""Trust levels: earned by conduct (comments, likes received, days visited), lost by upheld
reports, set by hand by staff; each level's allowances; GET /api/me/ shows the level and what the
next needs; reports weigh, and authors are protected, by level."""

import time
from datetime import timedelta
from unittest.mock import patch

import pytest
from django.core.cache import cache
from django.db import OperationalError, connection
from django.db.models import QuerySet
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from actions.comments import comment_create
from actions.likes import like_add
from project.clock import ManualClock, clock_override
from social.account.limits import account_is_new
from social.models import HeldComment, TrustRecord
from social.moderation import staff_services
from social.moderation.standing import hide_threshold, report_weight
from social.selectors import comment_find
from social.spam.levels import MEMBER, NEW, REGULAR, trust_level, trust_refresh, trust_set
from tests.trust import established

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def rules(settings):
    settings.HOLD_FOR_REVIEW_ENABLED = True
    settings.TRUST_MEMBER_COMMENTS, settings.TRUST_MEMBER_LIKES, settings.TRUST_MEMBER_DAYS = 2, 1, 2
    settings.TRUST_REGULAR_COMMENTS, settings.TRUST_REGULAR_LIKES, settings.TRUST_REGULAR_DAYS = 3, 2, 3
    settings.TRUST_REFRESH_SECONDS = 0  # recomputed at every look, for the test
    settings.SPAM_BURST_LIMIT = "100/10min"
    return settings


def uid(user) -> str:
    return str(user.pk)


def visited(user, days: int) -> None:
    TrustRecord.objects.get_or_create(user_id=user.pk)
    TrustRecord.objects.filter(user_id=user.pk).update(days_visited=days)


def test_a_new_account_earns_member_then_regular_by_conduct_not_by_days(make_user, rules):
    person, fans = make_user("person"), [established(make_user(f"fan{n}")) for n in range(2)]
    newcomers = [make_user(f"newcomer{n}") for n in range(3)]
    assert trust_level(user_id=uid(person)) == NEW
    first = comment_create(author_id=uid(person), body="hello everyone")
    comment_create(author_id=uid(person), body="a second thought")
    assert trust_level(user_id=uid(person)) == NEW  # comments, but no like and one day visited
    for newcomer in newcomers:  # likes from new accounts earn nothing: they cannot promote each other
        like_add(comment_id=first.comment_id, user_id=uid(newcomer))
    visited(person, 2)
    assert trust_level(user_id=uid(person)) == NEW
    assert TrustRecord.objects.get(user_id=person.pk).likes_received == 0
    like_add(comment_id=first.comment_id, user_id=uid(fans[0]))
    assert trust_level(user_id=uid(person)) == MEMBER
    comment_create(author_id=uid(person), body="and a third")
    like_add(comment_id=first.comment_id, user_id=uid(fans[1]))
    visited(person, 3)
    assert trust_level(user_id=uid(person)) == REGULAR
    assert "regular" in TrustRecord.objects.get(user_id=person.pk).why


def test_age_alone_earns_nothing(make_user, rules):
    person = make_user("person")
    person.date_joined = timezone.now() - timedelta(days=400)
    person.save(update_fields=["date_joined"])
    visited(person, 30)
    assert trust_level(user_id=uid(person)) == NEW  # old and often here, but never wrote or was liked
    assert account_is_new(user_id=uid(person))  # the `_NEW` write limits are the lowest level's


def test_upheld_reports_demote(make_user, rules):
    person, staff = make_user("person"), make_user("mod", is_staff=True)
    comments = [comment_create(author_id=uid(person), body=f"rude {n}") for n in range(2)]
    like_add(comment_id=comments[0].comment_id, user_id=uid(staff))  # staff are established likers
    visited(person, 2)
    assert trust_level(user_id=uid(person)) == MEMBER
    for comment in comments:
        staff_services.comment_hide_by_staff(comment_id=comment.comment_id, staff=staff)
    record = TrustRecord.objects.get(user_id=person.pk)
    assert (record.upheld_reports, record.level) == (2, NEW) and "upheld" in record.why
    # Back at the lowest level: its links wait for review again.
    held = comment_create(author_id=uid(person), body="see https://example.org/x for details")
    assert comment_find(comment_id=held.comment_id).hidden_by == "held"


def test_staff_set_a_level_by_hand_and_see_why(make_user, rules, client):
    person, staff = make_user("person"), make_user("mod", is_staff=True)
    staff.is_superuser = True
    staff.save(update_fields=["is_superuser"])
    record = trust_set(user_id=uid(person), level=REGULAR, staff_username="mod", note="known doctor")
    assert (record.level, record.why) == (REGULAR, "set by mod: known doctor")
    assert trust_level(user_id=uid(person)) == REGULAR
    trust_set(user_id=uid(person), level=None, staff_username="mod")
    assert trust_level(user_id=uid(person)) == NEW
    client.force_login(staff)
    page = client.get("/admin/social/trustrecord/").content.decode()
    assert "person" in page and "a new account" in page
    answer = client.post(
        f"/admin/social/trustrecord/{person.pk}/change/", {"manual_level": "1", "manual_note": "vouched"}
    )
    assert answer.status_code == 302
    assert TrustRecord.objects.get(user_id=person.pk).why == "set by mod: vouched"


def test_api_me_shows_the_level_and_what_the_next_needs(make_user, rules, api):
    person = make_user("person")
    trust = api.as_user(person).get("/api/me/").json()["trust"]
    assert (trust["level"], trust["name"], trust["next_level"]) == (0, "new", 1)
    assert trust["next_needs"] == {"comments": 2, "likes": 1, "days": 2}
    assert trust["why"] == "a new account"


def test_each_levels_allowances_are_settings(make_user, rules, settings):
    settings.TRUST_LINKS = "0,1,5"
    person = make_user("person")
    trust_set(user_id=uid(person), level=MEMBER, staff_username="mod")
    one = comment_create(author_id=uid(person), body="please read https://example.org/a before the meeting")
    two = comment_create(author_id=uid(person), body="read https://example.org/a and https://example.org/b first")
    assert not comment_find(comment_id=one.comment_id).hidden
    assert HeldComment.objects.get(comment_id=two.comment_id).rule == "too_many_links"
    settings.TRUST_HOLD_LEVELS = "1"
    held = comment_create(author_id=uid(person), body="just words")
    assert HeldComment.objects.get(comment_id=held.comment_id).rule == "level_held"


def test_report_weight_and_author_protection_follow_levels(make_user, rules, settings):
    settings.REPORT_STANDING_DAYS = 0
    settings.REPORT_STANDING_COMMENTS = 0
    settings.REPORT_THRESHOLD_STEP_DAYS = 0
    settings.REPORT_HIDE_THRESHOLD = 3
    reporter = make_user("reporter")
    reporter.email_verified = True
    reporter.save(update_fields=["email_verified"])
    assert report_weight(reporter_id=uid(reporter)) == 0  # standing, but the lowest level
    trust_set(user_id=uid(reporter), level=MEMBER, staff_username="mod")
    assert report_weight(reporter_id=uid(reporter)) == 100
    trust_set(user_id=uid(reporter), level=REGULAR, staff_username="mod")
    assert report_weight(reporter_id=uid(reporter)) == 150
    assert hide_threshold(author_id=uid(reporter)) == 500  # a regular author: 3 + 2 people
    assert trust_refresh(user_id="nobody") is None


def test_a_database_refusing_the_day_visited_leaves_the_answer_as_it_was(make_user, rules, client, caplog):
    person = make_user("person")
    client.force_login(person)
    cache.clear()  # the log-in's count is forgotten: the next request asks the database again

    def refused(*args, **kwargs):
        raise OperationalError("could not serialize access")

    with patch.object(QuerySet, "update", refused):
        assert client.get("/").status_code == 200
    assert "day visited of user" in caplog.text
    client.get("/")  # asked again at the next request, and counted
    assert TrustRecord.objects.get(user_id=person.pk).days_visited == 1


def test_days_visited_are_days_seen_logged_in_counted_once_a_day(make_user, rules, client, api):
    person = make_user("person")
    record = lambda: TrustRecord.objects.get(user_id=person.pk)  # noqa: E731
    client.get("/")
    assert not TrustRecord.objects.filter(user_id=person.pk).exists()  # a visitor, not a person
    with clock_override(ManualClock(time.time())) as manual:
        client.force_login(person)  # a log-in counts the day
        assert record().days_visited == 1
        with CaptureQueriesContext(connection) as queries:
            for _ in range(3):
                assert client.get("/").status_code == 200
        assert not [query for query in queries.captured_queries if "UPDATE" in query["sql"] and "trust" in query["sql"]]
        assert record().days_visited == 1
        manual.advance(86400)
        client.get(f"/u/{person.username}/")  # a page view the next day
        assert record().days_visited == 2
        manual.advance(86400)
        assert api.as_user(person).get("/api/me/").status_code == 200  # an API request with a token
        assert record().days_visited == 3
