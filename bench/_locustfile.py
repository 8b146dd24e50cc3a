"""The people bench/load.py simulates (Locust runs this file; it is not a benchmark itself).

Each person has an account (token for the API, session cookie for pages) and, like an
open tab, asks GET /api/live/ for the comments on screen every 2 s (or the X-Poll-Interval the
server sets), with the last answer's ETag (after a page, the page's own cursor); between polls, about
an action every 2 s on average: the timeline, a comment page, like or unlike, a reply, the badge,
the inbox. LOAD_MODE=hot: everyone on the same comment. LOAD_DATA names the JSON file
bench/load.py wrote (accounts, comment ids, the hot comment); each request's route, status and
time go to LOAD_SAMPLES when Locust quits.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import time

from locust import HttpUser, between, events, task

DATA = json.loads(open(os.environ["LOAD_DATA"]).read())  # noqa: SIM115
HOT = os.environ.get("LOAD_MODE") == "hot"
POLL_SECONDS = 2.0
_accounts = itertools.cycle(DATA["accounts"])
LIKE_COUNT = re.compile(r'data-like-count="([^"]+)"')
CURSOR = re.compile(r'data-live-cursor="([^"]*)"')
_samples: list[str] = []  # "route,status,ms" per request (status 0: no answer), for bench/load.py


@events.request.add_listener
def _sample(request_type, name, response_time, response_length, response=None, exception=None, **kwargs):
    status = getattr(response, "status_code", 0) or 0
    _samples.append(f"{name},{status},{response_time:.1f}\n")


@events.quitting.add_listener
def _samples_write(environment, **kwargs):
    if os.environ.get("LOAD_SAMPLES"):
        with open(os.environ["LOAD_SAMPLES"], "w") as file:
            file.writelines(_samples)


class Person(HttpUser):
    wait_time = between(0.5, 1.5)

    def on_start(self):
        self.account = next(_accounts)
        self.client.headers["Authorization"] = f"Token {self.account['token']}"
        self.client.cookies.set("sessionid", self.account["sessionid"])
        self.last_poll = 0.0
        self.poll_every = POLL_SECONDS
        self.liked: set[str] = set()
        self.look_around()

    def look_around(self, page=None) -> None:
        """A new page: other comments on screen, and the live poll starts over. As live.js does,
        the page's comments (the first 5, as if in view) are followed and its cursor
        (`data-live-cursor`) is the first poll's If-None-Match; without a page (a refused one, the
        first look), 5 comments at random and no ETag."""
        html = page.text if page is not None and page.status_code == 200 else ""
        shown = list(dict.fromkeys(LIKE_COUNT.findall(html)))[:5]
        cursor = CURSOR.search(html)
        self.screen = shown or ([DATA["hot"]] if HOT else random.sample(DATA["comments"], 5))
        self.etag = cursor.group(1) if shown and cursor and cursor.group(1) else None

    def comment(self) -> str:
        return DATA["hot"] if HOT else random.choice(DATA["comments"])

    @task
    def step(self):
        if time.monotonic() - self.last_poll >= self.poll_every:
            self.poll()
        if random.random() < 0.5:
            random.choices(ACTIONS, weights=WEIGHTS)[0](self)

    def poll(self) -> None:
        """As live.js polls: If-None-Match with the last ETag, the server's X-Poll-Interval, and
        after a refusal its Retry-After."""
        self.last_poll = time.monotonic()
        headers = {"If-None-Match": self.etag} if self.etag else {}
        answer = self.client.get(f"/api/live/?comments={','.join(self.screen)}", name="live poll", headers=headers)
        if answer.status_code in (200, 304):
            self.etag = answer.headers.get("ETag", self.etag)
            self.poll_every = float(answer.headers.get("X-Poll-Interval", POLL_SECONDS))
        elif answer.headers.get("Retry-After", "").isdigit():
            self.last_poll += float(answer.headers["Retry-After"]) - self.poll_every

    def timeline(self):
        self.look_around(self.client.get("/", name="timeline page"))

    def comment_page(self):
        self.look_around(self.client.get(f"/c/{self.comment()}/", name="comment page"))

    def like_or_unlike(self):
        comment = self.comment()
        if comment in self.liked:
            self.client.delete(f"/api/comments/{comment}/like/", name="unlike")
            self.liked.discard(comment)
        else:
            self.client.put(f"/api/comments/{comment}/like/", name="like")
            self.liked.add(comment)

    def reply(self):
        body = {"body": "Agreed, thank you.", "parent_id": self.comment()}
        self.client.post("/api/comments/", json=body, name="reply")

    def badge(self):
        self.client.get("/api/notifications/unread-count/", name="badge")

    def inbox(self):
        self.client.get("/notifications/", name="inbox page")


ACTIONS_WEIGHTS = [
    (Person.timeline, 3),
    (Person.comment_page, 3),
    (Person.like_or_unlike, 3),
    (Person.reply, 1),
    (Person.badge, 1),
    (Person.inbox, 1),
]
ACTIONS = [action for action, _ in ACTIONS_WEIGHTS]
WEIGHTS = [weight for _, weight in ACTIONS_WEIGHTS]
