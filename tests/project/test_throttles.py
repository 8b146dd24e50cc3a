"""API throttles and view marks live in DynamoDB: what one process counted, every other sees.

"Another process" is simulated by dropping this process's memory: Django's cache
(where throttles and view marks used to live) and the limit store's remembered denials.
"""

import time

import pytest
from django.core.cache import cache

from actions.comments import comment_create
from project.clock import ManualClock, clock_override
from project.limits.store import limits_forget_memory
from social.counters import VIEWS, counter_key, counter_value

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("aws_read_lag")]


@pytest.fixture(autouse=True)
def frozen_clock():
    """Time stands still (at the real now, so new accounts are new): no window ends mid-test."""
    with clock_override(ManualClock(time.time())) as frozen:
        yield frozen


@pytest.fixture
def rates(settings):
    settings.RATE_LIMITS_ENABLED = True

    def set_rates(**rates):
        settings.REST_FRAMEWORK = {
            **settings.REST_FRAMEWORK,
            "DEFAULT_THROTTLE_RATES": {**settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"], **rates},
        }

    return set_rates


def _as_another_process():
    cache.clear()
    limits_forget_memory()


def test_the_anonymous_throttle_is_shared_by_every_process(api, rates):
    rates(anon="3/min")
    statuses = []
    for _ in range(4):
        statuses.append(api.get("/api/comments/", REMOTE_ADDR="10.1.1.1").status_code)
        _as_another_process()
    assert statuses == [200, 200, 200, 429]
    refused = api.get("/api/comments/", REMOTE_ADDR="10.1.1.1")
    assert refused.status_code == 429 and 0 < int(refused.headers["Retry-After"]) <= 60
    assert api.get("/api/comments/", REMOTE_ADDR="10.1.1.2").status_code == 200  # another address


def test_the_user_throttle_counts_the_account_from_any_address(api, make_user, rates):
    rates(user="2/min")
    client = api.as_user(make_user("ann"))
    statuses = [client.get("/api/comments/", REMOTE_ADDR=f"10.2.0.{n}").status_code for n in range(1, 4)]
    assert statuses == [200, 200, 429]


def test_ipv6_addresses_of_one_network_share_the_anonymous_budget(api, rates):
    rates(anon="2/min")
    statuses = [api.get("/api/comments/", REMOTE_ADDR=f"2001:db8:0:1::{n:x}").status_code for n in range(1, 4)]
    assert statuses == [200, 200, 429]


def test_the_live_poll_is_leased_and_still_shared(api, make_user, rates, settings):
    rates(live="12/min")
    settings.LIMIT_LIVE_BLOCK = 5
    client = api.as_user(make_user("bea"))
    first = [client.get("/api/live/").status_code for _ in range(5)]  # one lease of 5
    _as_another_process()  # this process's unused units are gone with it
    rest = [client.get("/api/live/").status_code for _ in range(9)]
    assert first == [200] * 5
    assert rest.count(200) == 7 and rest[-1] == 429  # 12 in all, never more


def test_a_viewer_is_counted_once_an_hour_whichever_process_serves_them(client, make_user):
    author = make_user("cal")
    comment = comment_create(author_id=str(author.pk), body="Seen")
    for _ in range(3):
        assert client.get(f"/c/{comment.comment_id}/", REMOTE_ADDR="10.3.3.3").status_code == 200
        _as_another_process()
    assert counter_value(key=counter_key(kind=VIEWS, object_id=comment.comment_id)) == 1
    client.get(f"/c/{comment.comment_id}/", REMOTE_ADDR="10.3.3.4")
    assert counter_value(key=counter_key(kind=VIEWS, object_id=comment.comment_id)) == 2
