"""The live poll backs off when the server refuses it (503 busy or down, 429 throttled):
it waits for Retry-After, longer with each refusal in a row, and polls every 2 s again
once answered. The page's clock is Playwright's fake one: no test waits on real time."""

from __future__ import annotations

import time

from actions.comments import comment_create

START = 1_800_000_000_000  # ms since the epoch


def settle(page, requests, count):
    """Wait (real time) until `count` polls were made and answered."""
    deadline = time.monotonic() + 20
    while len(requests) < count and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    page.wait_for_timeout(300)  # the answer reaches the script, which schedules the next poll
    return len(requests)


def test_the_live_poll_waits_for_retry_after_and_backs_off_on_refusals(pages, make_user):
    alice = make_user("alice")
    comment_create(author_id=str(alice.pk), body="Followed live")
    page = pages.open(None, user=alice)
    page.clock.install(time=START)
    page.clock.pause_at(START + 1)  # fake time moves only with run_for
    requests: list[str] = []
    refusing = {"status": 503}

    def answer(route):
        requests.append(route.request.url)
        if refusing["status"]:
            route.fulfill(status=refusing["status"], headers={"Retry-After": "10"}, json={"code": "overloaded"})
        else:
            route.continue_()

    page.route("**/api/live/**", answer)
    page.goto("/")

    page.clock.run_for(2_100)
    assert settle(page, requests, 1) == 1  # the first poll, refused: wait 10 s (+ up to 25%)
    page.clock.run_for(9_500)
    assert settle(page, requests, 2) == 1
    page.clock.run_for(3_500)
    assert settle(page, requests, 2) == 2  # refused again: now 20 s (+ up to 25%)
    page.clock.run_for(19_000)
    assert settle(page, requests, 3) == 2

    refusing["status"] = 429  # throttled is treated the same way
    page.clock.run_for(6_500)
    assert settle(page, requests, 3) == 3  # third refusal in a row: 40 s
    page.clock.run_for(38_000)
    assert settle(page, requests, 4) == 3

    refusing["status"] = None  # answered again
    page.clock.run_for(12_500)
    assert settle(page, requests, 4) == 4
    page.clock.run_for(2_100)
    assert settle(page, requests, 5) == 5  # back to every 2 s
