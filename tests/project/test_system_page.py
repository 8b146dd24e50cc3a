"""The admin System page: each worker's heartbeat, backlog and lag, for staff only."""

from __future__ import annotations

import pytest

from project.clock import ManualClock, clock_override
from project.operations.backlog import Backlog
from project.operations.health_selectors import WORKERS
from project.operations.health_services import heartbeat_write

pytestmark = pytest.mark.django_db
T0 = 1_900_000_000.0


@pytest.fixture
def staff(make_user):
    return make_user("staff", is_staff=True)


def beat(worker: str, *, at: float, backlog: Backlog | None = None) -> None:
    heartbeat_write(
        worker=worker, instance="web-1:10", started_at=at, now=at, cycle_at=at, cycle_seconds=0.5, backlog=backlog
    )


def test_the_admin_index_links_the_system_page(client, staff):
    client.force_login(staff)
    assert "/admin/dynamo/system/" in client.get("/admin/").content.decode()


def test_staff_see_each_worker_and_the_stale_ones_marked_in_words(client, staff, settings):
    settings.WORKER_STALE_SECONDS = 60
    client.force_login(staff)
    with clock_override(ManualClock(T0)):
        beat("fold_like_events", at=T0 - 3, backlog=Backlog(label="pending like events", count=12, oldest_at=T0 - 45))
        beat("aggregate_counters", at=T0 - 200)
        text = client.get("/admin/dynamo/system/").content.decode()
    missing = len(WORKERS) - 2
    assert f"{missing + 1} workers need attention" in text  # one stale, the others missing
    fold = text[text.index(">fold_like_events<") :]
    fold = fold[: fold.index("</tr>")]
    assert "12 pending like events" in fold and "42 s" in fold and "OK" in fold
    aggregate = text[text.rindex('<tr class="worker-problem">', 0, text.index(">aggregate_counters<")) :]
    assert "<strong>Stale</strong>" in aggregate[: aggregate.index("</tr>")]
    assert text.count("<strong>Missing</strong>") == missing


def test_non_staff_are_sent_to_the_admin_log_in(client, make_user):
    client.force_login(make_user("plain"))
    answer = client.get("/admin/dynamo/system/")
    assert answer.status_code == 302 and "/admin/login/" in answer["Location"]
