"""The shared limit store (project/limits/store.py): conditional counters in DynamoDB Local."""

from concurrent.futures import ThreadPoolExecutor

import pytest

from project.clock import ManualClock, clock_override
from project.limits import store as limits
from project.models import LimitCounter

pytestmark = pytest.mark.usefixtures("aws_read_lag")


@pytest.fixture(autouse=True)
def limits_on(settings):
    settings.RATE_LIMITS_ENABLED = True


@pytest.fixture(autouse=True)
def manual_clock():
    """Time moves only when a test moves it: no window ends mid-test."""
    with clock_override(ManualClock(1_800_000_000.0)) as moved:  # a round hour and day
        yield moved


def test_rules_parse_orders_and_refuses_nonsense():
    assert limits.rules_parse("100/day, 10/min") == (limits.Rule(10, 60), limits.Rule(100, 86400))
    assert limits.rules_parse("30/5min") == (limits.Rule(30, 300),)
    assert limits.rules_parse("2/hours") == (limits.Rule(2, 3600),)
    for bad in ("", "10", "0/min", "5/fortnight", "1/min,2/min", "1/s,1/min,1/h,1/d"):
        with pytest.raises(ValueError):
            limits.rules_parse(bad)


def test_a_limit_allows_its_count_then_refuses_until_the_window_ends(manual_clock):
    decisions = [limits.limit_hit(name="t", subject="alice", rules="3/min") for _ in range(4)]
    assert [d.allowed for d in decisions] == [True, True, True, False]
    assert decisions[2].count == 3
    assert decisions[3].retry_after == pytest.approx(60)
    manual_clock.advance(45)
    assert limits.limit_hit(name="t", subject="alice", rules="3/min").retry_after == pytest.approx(15)
    manual_clock.advance(15)
    assert limits.limit_hit(name="t", subject="alice", rules="3/min").allowed


def test_subjects_and_names_are_counted_apart(manual_clock):
    assert limits.limit_hit(name="t", subject="alice", rules="1/min").allowed
    assert limits.limit_hit(name="t", subject="bob", rules="1/min").allowed
    assert limits.limit_hit(name="u", subject="alice", rules="1/min").allowed
    assert not limits.limit_hit(name="t", subject="alice", rules="1/min").allowed


def test_several_rules_hold_at_once_in_one_item(manual_clock):
    rules = "2/min,3/hour"
    assert [limits.limit_hit(name="t", subject="a", rules=rules).allowed for _ in range(3)] == [True, True, False]
    manual_clock.advance(60)  # a new minute: its count starts again, the hour's goes on
    assert limits.limit_hit(name="t", subject="a", rules=rules).allowed
    refused = limits.limit_hit(name="t", subject="a", rules=rules)
    assert not refused.allowed and refused.retry_after == pytest.approx(3540)  # the hour's end
    assert LimitCounter.count.attr_name and len(list(LimitCounter.scan(consistent_read=True))) == 1


def test_a_refusal_is_remembered_without_writing_again(manual_clock, monkeypatch):
    for _ in range(2):
        limits.limit_hit(name="t", subject="a", rules="1/min")
    writes = []
    monkeypatch.setattr(LimitCounter, "update", lambda *a, **k: writes.append(1))
    for _ in range(50):
        assert not limits.limit_hit(name="t", subject="a", rules="1/min").allowed
    assert writes == []


def test_concurrent_hits_never_pass_the_limit():
    with ThreadPoolExecutor(8) as pool:
        decisions = list(pool.map(lambda _: limits.limit_hit(name="t", subject="a", rules="25/hour"), range(60)))
    assert sum(d.allowed for d in decisions) == 25
    assert LimitCounter.get(next(iter(LimitCounter.scan(consistent_read=True))).key, consistent_read=True).count == 25


def test_concurrent_hits_with_two_rules_at_a_window_roll(manual_clock):
    manual_clock.advance(59.5)
    limits.limit_hit(name="t", subject="a", rules="5/min,12/hour")  # stored in the old minute
    manual_clock.advance(1)
    limits.limits_forget_memory()
    with ThreadPoolExecutor(8) as pool:
        decisions = list(pool.map(lambda _: limits.limit_hit(name="t", subject="a", rules="5/min,12/hour"), range(20)))
    assert sum(d.allowed for d in decisions) == 5


def test_a_leased_block_costs_one_write_per_block_and_never_passes_the_limit(manual_clock, monkeypatch):
    writes = []
    real = LimitCounter.update
    monkeypatch.setattr(LimitCounter, "update", lambda self, *a, **k: writes.append(1) or real(self, *a, **k))
    allowed = sum(limits.limit_hit(name="live", subject="a", rules="25/min", block=10).allowed for _ in range(30))
    assert allowed == 25  # two blocks of 10, then the 5 left
    assert len(writes) == 2 + 2 + 1  # the refused block before the 5, and the one refusal
    # Another process (no lease of its own) finds the budget spent.
    limits.limits_forget_memory()
    assert not limits.limit_hit(name="live", subject="a", rules="25/min", block=10).allowed


def test_forget_takes_back_hits(manual_clock):
    for _ in range(3):
        limits.limit_hit(name="t", subject="a", rules="3/min")
    limits.limit_forget(name="t", subject="a", rules="3/min", hits=1)
    assert limits.limit_hit(name="t", subject="a", rules="3/min").allowed  # the third of three again
    assert not limits.limit_hit(name="t", subject="a", rules="3/min").allowed
    limits.limit_forget(name="t", subject="a", rules="3/min")
    assert all(limits.limit_hit(name="t", subject="a", rules="3/min").allowed for _ in range(3))


def test_lifted_limits_write_nothing(settings, manual_clock):
    settings.RATE_LIMITS_ENABLED = False
    assert all(limits.limit_hit(name="t", subject="a", rules="1/min").allowed for _ in range(5))
    assert list(LimitCounter.scan(consistent_read=True)) == []
    assert not all(limits.limit_hit(name="t", subject="a", rules="1/min", liftable=False).allowed for _ in range(2))


def test_once_per_window_is_true_once(manual_clock):
    assert limits.once_per_window(name="view", subject="x", seconds=3600)
    assert not limits.once_per_window(name="view", subject="x", seconds=3600)
    assert limits.once_per_window(name="view", subject="y", seconds=3600)
    manual_clock.advance(3600)
    assert limits.once_per_window(name="view", subject="x", seconds=3600)


def test_long_or_odd_subjects_are_hashed_and_ipv6_counts_by_network():
    assert limits.limit_hit(name="t", subject="x" * 10_000 + "#\n", rules="1/min").allowed
    assert not limits.limit_hit(name="t", subject="x" * 10_000 + "#\n", rules="1/min").allowed
    assert limits.address_subject("2001:db8:1:2:3:4:5:6") == limits.address_subject("2001:db8:1:2:ffff::1")
    assert limits.address_subject("::ffff:10.0.0.1") == "10.0.0.1"
    assert limits.address_subject("10.0.0.1") != limits.address_subject("10.0.0.2")


def test_a_malformed_limit_setting_stops_manage_py(settings):
    from django.core.management import call_command
    from django.core.management.base import SystemCheckError

    call_command("check")
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "comment": ("10 per minute", "")}
    with pytest.raises(SystemCheckError, match="LIMIT_COMMENT"):
        call_command("check")


def test_a_retired_setting_left_in_the_environment_warns_naming_what_replaced_it(monkeypatch):
    from django.core import checks

    assert not [message for message in checks.run_checks() if message.id == "project.W001"]
    monkeypatch.setenv("LIMIT_NEW_ACCOUNT_DAYS", "7")
    [warning] = [message for message in checks.run_checks() if message.id == "project.W001"]
    assert warning.level == checks.WARNING
    assert "LIMIT_NEW_ACCOUNT_DAYS" in warning.msg and "TRUST_MEMBER_DAYS" in warning.msg
