"""The people bench/load.py simulates (Locust runs this file; it is not a benchmark itself).

Each person has an account (token for the API, session cookie for pages) and, like an
open tab, asks GET /api/live/ every 2 s for the comments on screen; between polls, about
an action every 2 s on average: the timeline, a comment page, like or unlike, a reply, the badge,
the inbox. LOAD_MODE=hot: everyone on the same comment. LOAD_DATA names the JSON file
bench/load.py wrote (accounts, comment ids, the hot comment).
"""

from __future__ import annotations

import itertools
import json
import os
import random
import time

from locust import HttpUser, between, task

DATA = json.loads(open(os.environ["LOAD_DATA"]).read())  # noqa: SIM115
HOT = os.environ.get("LOAD_MODE") == "hot"
POLL_SECONDS = 2.0
_accounts = itertools.cycle(DATA["accounts"])


class Person(HttpUser):
    wait_time = between(0.5, 1.5)

    def on_start(self):
        self.account = next(_accounts)
        self.client.headers["Authorization"] = f"Token {self.account['token']}"
        self.client.cookies.set("sessionid", self.account["sessionid"])
        self.last_poll = 0.0
        self.liked: set[str] = set()

    def comment(self) -> str:
        return DATA["hot"] if HOT else random.choice(DATA["comments"])

    def on_screen(self) -> list[str]:
        return [DATA["hot"]] if HOT else random.sample(DATA["comments"], 5)

    @task
    def step(self):
        if time.monotonic() - self.last_poll >= POLL_SECONDS:
            self.last_poll = time.monotonic()
            self.client.get(f"/api/live/?comments={','.join(self.on_screen())}", name="live poll")
        if random.random() < 0.5:
            random.choices(ACTIONS, weights=WEIGHTS)[0](self)

    def timeline(self):
        self.client.get("/", name="timeline page")

    def comment_page(self):
        self.client.get(f"/c/{self.comment()}/", name="comment page")

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
