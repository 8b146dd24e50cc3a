"""The staff API and admin page of the activity rollup, and a user's own activity page."""

from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from project.clock import ManualClock, clock_override
from social.activity import selectors
from social.activity import services as activity
from social.activity.models import ActivityDaily, ActivityDay
from social.activity.month_tables import activity_table_drop, activity_table_months, activity_tables_forget

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]

TOKYO = ZoneInfo("Asia/Tokyo")
NOW = datetime(2026, 11, 18, 12, 0, tzinfo=TOKYO).timestamp()


@pytest.fixture(autouse=True)
def activity_clean(settings):
    settings.TIME_ZONE = "Asia/Tokyo"
    for month in activity_table_months():
        activity_table_drop(month=month)
    activity_tables_forget()
    with clock_override(ManualClock(NOW, step=0.001)):
        yield
    activity_tables_forget()


@pytest.fixture
def rollup_rows():
    ActivityDay.objects.create(date=date(2026, 11, 17), active_users=3, items=7, rolled_up_at="2026-11-18T00:00Z")
    ActivityDaily.objects.create(date=date(2026, 11, 17), action="like", count=5, users=2)
    ActivityDaily.objects.create(date=date(2026, 11, 17), action="comment", count=2, users=2)
    ActivityDaily.objects.create(date=date(2026, 11, 16), action="like", count=1, users=1)


def test_daily_api_answers_the_rollup(api, make_user, rollup_rows):
    client = api.as_user(make_user(is_staff=True))
    answer = client.get("/api/activity/daily/", {"from": "2026-11-17", "to": "2026-11-18"})
    assert answer.status_code == 200
    assert answer.json() == {
        "results": [
            {"date": "2026-11-17", "action": "comment", "count": 2, "users": 2},
            {"date": "2026-11-17", "action": "like", "count": 5, "users": 2},
        ]
    }
    only = client.get("/api/activity/daily/", {"from": "2026-11-01", "to": "2026-11-30", "action": "like"})
    assert [row["date"] for row in only.json()["results"]] == ["2026-11-16", "2026-11-17"]


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"to": "2026-11-18"}, "from"),
        ({"from": "2026-11-18"}, "to"),
        ({"from": "yesterday", "to": "2026-11-18"}, "from"),
        ({"from": "2026-11-18", "to": "2026-11-17"}, "to"),
        ({"from": "2025-01-01", "to": "2026-11-17"}, "to"),
        ({"from": "2026-11-17", "to": "2026-11-18", "action": "dance"}, "action"),
    ],
)
def test_daily_api_names_the_bad_parameter(api, make_user, params, field):
    answer = api.as_user(make_user(is_staff=True)).get("/api/activity/daily/", params)
    assert answer.status_code == 400
    assert field in answer.json() and answer.json()["code"] == "invalid"


def test_daily_api_is_for_staff_only(api, make_user):
    params = {"from": "2026-11-17", "to": "2026-11-18"}
    assert api.get("/api/activity/daily/", params).status_code == 401
    assert api.as_user(make_user()).get("/api/activity/daily/", params).status_code == 403


def test_admin_activity_page_draws_the_chart_without_scripts(client, make_user, rollup_rows):
    client.force_login(make_user(is_staff=True))
    page = client.get("/admin/dynamo/activity/?days=90")
    assert page.status_code == 200
    html = page.content.decode()
    assert "<svg" in html and "<polyline" in html and "<script" not in html.split("<svg", 1)[1].split("</svg>")[0]
    # One small chart per series (active users, comment, like), each on its own round scale.
    assert html.count("<polyline") == 3
    assert 'aria-label="Like per day, 2026-08-21 to 2026-11-18: 6 in all"' in html
    assert "Last 90 days" in html and "2026-11-17" in html
    assert "activity_202611" in html  # the monthly tables (the staff user's sign-up created November's)
    assert "/admin/dynamo/activity/" in client.get("/admin/").content.decode()


def test_my_activity_pages_newest_first_over_two_months(client, make_user):
    user = make_user("reader")
    october = datetime(2026, 10, 31, 23, 0, tzinfo=TOKYO).timestamp()
    for n in range(3):
        activity.activity_record(user_id=str(user.pk), action="view", object_id=f"old{n}", at=october + n)
    other = "another-user"  # not a Django pk: no test order can make it the reader's own id
    activity.activity_record(user_id=other, action="like", object_id="someone-else", at=october)
    client.force_login(user)  # logs a login at NOW, after the sign-up: the newest lines
    first = client.get("/me/activity/")
    assert first.status_code == 200

    page = selectors.activity_of_user(user_id=str(user.pk), limit=2, now=NOW)
    assert [entry.action for entry in page.results] == ["login", "signup"]
    page = selectors.activity_of_user(user_id=str(user.pk), limit=2, now=NOW, cursor=page.next_cursor)
    assert [entry.object_id for entry in page.results] == ["old2", "old1"]  # last month
    rest = selectors.activity_of_user(user_id=str(user.pk), limit=2, now=NOW, cursor=page.next_cursor)
    assert [entry.object_id for entry in rest.results] == ["old0"] and rest.next_cursor is None
    assert "someone-else" not in first.content.decode()
    # A cursor is signed and bound to its user.
    with pytest.raises(Exception, match="Invalid or expired cursor"):
        selectors.activity_of_user(user_id=other, limit=2, now=NOW, cursor=page.next_cursor)
    assert client.get("/me/activity/", {"cursor": "forged"}).status_code == 200


def test_my_activity_needs_a_sign_in(client):
    assert client.get("/me/activity/").status_code == 302


def test_my_activity_reads_as_sentences_in_the_browsers_time_zone(client, make_user):
    user = make_user("reader")
    at = datetime(2026, 11, 18, 9, 30, tzinfo=ZoneInfo("UTC")).timestamp()
    activity.activity_record(
        user_id=str(user.pk), action="like", object_id="c0ffee00-0000-0000-0000-000000000000", at=at
    )
    activity.activity_record(user_id=str(user.pk), action="read", object_id="c1,c2", at=at + 60)
    client.force_login(user)

    text = client.get("/me/activity/").content.decode()
    assert "Times are in Asia/Tokyo" in text and "18 Nov 2026, 18:30" in text  # the site's zone
    assert 'You liked <a href="/c/c0ffee00-0000-0000-0000-000000000000/">a comment</a>.' in text
    assert "You read your notifications." in text

    client.cookies["tz"] = "America/New_York"
    text = client.get("/me/activity/").content.decode()
    assert "Times are in America/New_York" in text and "18 Nov 2026, 04:30" in text

    client.cookies["tz"] = "../../etc/passwd"
    assert "Times are in Asia/Tokyo" in client.get("/me/activity/").content.decode()
    assert 'href="/me/activity/" aria-current="page"' in text  # linked from the header


@pytest.mark.parametrize(
    ("maximum", "ticks"),
    [(0, [0, 1]), (1, [0, 1]), (3, [0, 1, 2, 3]), (19, [0, 5, 10, 15, 20]), (25, [0, 10, 20, 30]), (99, [0, 50, 100])],
)
def test_chart_ticks_are_round(maximum, ticks):
    assert selectors.round_ticks(maximum) == ticks
