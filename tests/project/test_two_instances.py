"""Two complete instances, as two machines run them: each its own supervisord, gunicorn and
workers, both on one PostgreSQL database and one DynamoDB (the suite's DynamoDB Local, a
table prefix of their own). A person is the same person on both; likes, replies, limits and
deliveries are exact across both; and when one instance dies whole (every process SIGKILLed
at once, mid-load), the other serves everyone and nothing is lost.

The client in front plays the load balancer (project/testing/instances.py `Balancer`): each
request to the next instance that is up; one refused, dropped or shed goes again to the other,
with the same Idempotency-Key when it creates something.
"""

from __future__ import annotations

import re
import subprocess
import threading
import time
import uuid
from pathlib import Path

import pytest
import requests

from project.dynamo.local import free_port
from project.testing.harness import in_threads, served_environment, wait_for
from project.testing.instances import (
    BIN,
    ROOT,
    Balancer,
    Instance,
    instance_start,
    site_prepare,
)
from project.testing.postgres import postgres_database_drop, postgres_database_url

pytestmark = pytest.mark.slow

PASSWORD = "two-Instances-pw-1"
PEOPLE = 24
CROWD = 300  # more recipients of the delivery, so that the instance dies while it is dispatched
POSTER_COMMENTS_A_DAY = 4


class Site(Balancer):
    """The instances of one site, a client balancing between the ones that are up, and `manage`."""

    def __init__(self, instances: list[Instance], environment: dict[str, str]):
        super().__init__(instances)
        self.environment = environment

    def manage(self, *arguments: str, **environment: str) -> str:
        done = subprocess.run(
            [str(BIN / "python"), "manage.py", *arguments],
            cwd=ROOT,
            env={**self.environment, **environment},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        return done.stdout


@pytest.fixture(scope="module")
def site(dynamodb, tmp_path_factory):
    name = f"two_{uuid.uuid4().hex[:8]}"
    database_url = postgres_database_url(name)
    environment = served_environment(
        dynamodb_host=dynamodb,
        table_prefix=f"{name}_",
        database_url=database_url,
        WEB_CONCURRENCY="1",
        RATE_LIMITS_ENABLED="True",
        DELIVERY_CHUNK_SIZE="1",
        DELIVERY_LEASE_SECONDS="5",
        LIMIT_SIGNUP="1000/hour",
        LIMIT_COMMENT=f"{POSTER_COMMENTS_A_DAY}/day",
        LIMIT_COMMENT_NEW=f"{POSTER_COMMENTS_A_DAY}/day",
        LIMIT_DELIVERY_NEW="10/hour",
        # A request that died with its instance holds its Idempotency-Key this long (a live
        # request is never slower than this here, even on a busy machine).
        IDEMPOTENCY_LEASE_SECONDS="20",
    )
    site_prepare(environment)
    folder = tmp_path_factory.mktemp(name)
    instances: list[Instance] = []
    try:
        for label in ("a", "b"):
            instances.append(
                instance_start(label, environment=environment, port=free_port(), folder=Path(folder / label))
            )
        yield Site(instances, environment)
    finally:
        for instance in instances:
            instance.stop()
        postgres_database_drop(database_url)


def csrf_of(page: requests.Response) -> str:
    found = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
    assert found, page.text[:500]
    return found.group(1)


def token_of(site: Site, username: str) -> str:
    answer = site.request("POST", "/api/auth/token/", json={"username": username, "password": PASSWORD})
    assert answer.status_code == 200, answer.text
    return answer.json()["token"]


def people_sign_up(site: Site, count: int, prefix: str) -> dict[str, str]:
    """Sign-ups through the API, spread over the instances; username -> token."""

    def sign_up(number: int) -> tuple[str, str]:
        username = f"{prefix}{number}"
        answer = site.request("POST", "/api/users/", json={"username": username, "password": PASSWORD})
        assert answer.status_code == 201, answer.text
        return username, token_of(site, username)

    return dict(in_threads(sign_up, count))


def test_a_person_who_signs_up_on_one_instance_is_logged_in_on_the_other(site):
    a, b = site.instances
    browser = requests.Session()  # cookies of 127.0.0.1, whatever the port: one browser, two machines
    form = browser.get(f"{a.url}/accounts/signup/")
    signed_up = browser.post(
        f"{a.url}/accounts/signup/",
        data={
            "csrfmiddlewaretoken": csrf_of(form),
            "username": "Wanderer",
            "display_name": "Wanda",
            "email": "",
            "password1": PASSWORD,
            "password2": PASSWORD,
        },
    )
    assert signed_up.status_code == 200 and "Welcome, Wanda" in signed_up.text, signed_up.text[:500]

    me_on_b = browser.get(f"{b.url}/api/me/")
    assert me_on_b.status_code == 200 and me_on_b.json()["username"] == "Wanderer"
    assert "Log out" in browser.get(f"{b.url}/").text

    # An API client (no cookies) gets its token from one and uses it on the other.
    token = requests.post(f"{b.url}/api/auth/token/", json={"username": "wanderer", "password": PASSWORD}).json()
    assert requests.get(f"{a.url}/api/me/", headers={"Authorization": f"Token {token['token']}"}).status_code == 200

    logged_out = browser.post(f"{b.url}/accounts/logout/", data={"csrfmiddlewaretoken": csrf_of(browser.get(b.url))})
    assert logged_out.status_code == 200
    assert browser.get(f"{a.url}/api/me/").status_code in (401, 403)

    taken = requests.post(f"{b.url}/api/users/", json={"username": "wanderer", "password": PASSWORD})
    assert taken.status_code == 400 and "username" in taken.json()


def like_count(site: Site, comment_id: str) -> int:
    return site.request("GET", f"/api/comments/{comment_id}/").json()["like_count"]


def replies_of(site: Site, comment_id: str, token: str) -> list[dict]:
    found, cursor = [], ""
    while True:
        page = site.request("GET", f"/api/comments/{comment_id}/replies/?cursor={cursor}", token=token).json()
        found += page["results"]
        if not page["next"]:
            return found
        cursor = page["next"]


def messages_of(site: Site, token: str, delivery_id: str) -> int:
    answer = site.request("GET", "/api/feed/", token=token)
    assert answer.status_code == 200, answer.text
    return sum(1 for entry in answer.json()["results"] if entry["delivery_id"] == delivery_id)


def like_notification(site: Site, token: str, comment_id: str) -> dict | None:
    inbox = site.request("GET", "/api/notifications/", token=token).json()["results"]
    return next((entry for entry in inbox if entry["kind"] == "like" and entry["comment_id"] == comment_id), None)


CROWD_CREATE = f"""
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
User = get_user_model()
password = make_password({PASSWORD!r})
User.objects.bulk_create([User(username=f"crowd{{n}}", password=password) for n in range({CROWD})])
"""


def delivery_sent(site: Site, staff_token: str) -> str:
    answer = site.request(
        "POST",
        "/api/deliveries/",
        token=staff_token,
        key=uuid.uuid4().hex,
        json={"title": "Maintenance tonight", "body": "The site pauses at 22:00.", "audience": {"all": True}},
    )
    assert answer.status_code == 201, answer.text
    return answer.json()["id"]


def delivery_of(site: Site, staff_token: str, delivery_id: str) -> dict:
    return site.request("GET", f"/api/deliveries/{delivery_id}/", token=staff_token).json()


def test_likes_replies_limits_and_deliveries_are_exact_across_both_and_survive_one_dying(site):
    a, b = site.instances
    site.manage(
        "createsuperuser",
        "--no-input",
        "--username",
        "boss",
        "--email",
        "boss@example.com",
        DJANGO_SUPERUSER_PASSWORD=PASSWORD,
    )
    staff = token_of(site, "boss")
    people = people_sign_up(site, PEOPLE, "person")
    tokens = list(people.values())
    author = tokens[0]

    # Likes and replies from everyone at once, spread over both instances.
    comment = site.request("POST", "/api/comments/", token=author, key=uuid.uuid4().hex, json={"body": "Hello"}).json()

    def like_and_reply(number: int) -> None:
        liked = site.request("PUT", f"/api/comments/{comment['id']}/like/", token=tokens[number])
        assert liked.status_code == 200, liked.text
        replied = site.request(
            "POST",
            "/api/comments/",
            token=tokens[number],
            key=uuid.uuid4().hex,
            json={"body": f"Reply {number}", "parent_id": comment["id"]},
        )
        assert replied.status_code == 201, replied.text

    in_threads(like_and_reply, PEOPLE)
    assert like_count(site, comment["id"]) == PEOPLE
    assert len(replies_of(site, comment["id"], author)) == PEOPLE
    notification = wait_for(
        lambda: (
            (found := like_notification(site, author, comment["id"])) and found["actor_count"] == PEOPLE - 1 and found
        ),
        what="the author's like notification counting every other liker",
        seconds=120,
    )
    assert notification["unread"]

    # A write limit holds across both: the poster's comments alternate between the instances.
    poster = tokens[1]
    window_before = int(time.time() // 86400)
    statuses = [
        site.request(
            "POST", "/api/comments/", token=poster, key=uuid.uuid4().hex, json={"body": f"Post {n}"}
        ).status_code
        for n in range(2 * POSTER_COMMENTS_A_DAY)
    ]
    window_after = int(time.time() // 86400)
    if window_before == window_after:  # fixed day windows: a midnight between the posts opens a second budget
        assert statuses.count(201) == POSTER_COMMENTS_A_DAY and statuses.count(429) == POSTER_COMMENTS_A_DAY, statuses

    # One instance dies whole while people like, reply and a delivery is on its way.
    others = [
        site.request("POST", "/api/comments/", token=t, key=uuid.uuid4().hex, json={"body": "More"}).json()["id"]
        for t in tokens[2:6]
    ]
    site.manage("shell", "-c", CROWD_CREATE)
    delivery_id = delivery_sent(site, staff)
    done_requests = []
    kill_after = len(others) * PEOPLE // 3

    def load(number: int) -> None:
        for other in others:
            liked = site.request("PUT", f"/api/comments/{other}/like/", token=tokens[number])
            assert liked.status_code == 200, liked.text
            done_requests.append(1)
        replied = site.request(
            "POST",
            "/api/comments/",
            token=tokens[number],
            key=f"last-{number}",
            json={"body": "Still here", "parent_id": others[0]},
        )
        assert replied.status_code == 201, replied.text

    errors: list[BaseException] = []

    def run_load() -> None:
        try:
            in_threads(load, PEOPLE)
        except BaseException as error:  # surfaced by the assertion below
            errors.append(error)

    loader = threading.Thread(target=run_load, daemon=True)
    loader.start()
    wait_for(lambda: len(done_requests) >= kill_after or not loader.is_alive(), what="the load under way")
    in_flight = wait_for(
        lambda: (found := delivery_of(site, staff, delivery_id))["delivered_count"] > 0 and found,
        what="the delivery under way",
    )
    a.kill()
    loader.join(timeout=600)
    assert not loader.is_alive() and not errors, errors

    survivor = Site([b], site.environment)
    for other in others:
        assert like_count(survivor, other) == PEOPLE
    assert sum(1 for reply in replies_of(survivor, others[0], author) if reply["body"] == "Still here") == PEOPLE
    finished = wait_for(
        lambda: (found := delivery_of(survivor, staff, delivery_id))["status"] == "done" and found,
        what="the delivery finished by the survivor's dispatcher",
        seconds=180,
    )
    # Every account (the people, the crowd, the boss and whoever signed up in another test);
    # the counts are added in the very transactions that deliver.
    accounts = int(
        site.manage("shell", "-c", "from social.models import User; print(User.objects.count())").split()[-1]
    )
    assert accounts >= PEOPLE + CROWD + 1
    assert finished["delivered_count"] == finished["total_targets"] == accounts
    for token in [*tokens, staff]:
        assert messages_of(survivor, token, delivery_id) == 1
    for token in tokens[2:6]:
        wait_for(
            lambda token=token: any(
                entry["kind"] == "like" and entry["actor_count"] == PEOPLE - 1
                for entry in survivor.request("GET", "/api/notifications/", token=token).json()["results"]
            ),
            what="every liker in the notification of a comment liked while an instance died",
            seconds=120,
        )
    print(f"delivery when the instance died: {in_flight['delivered_count']} of {in_flight['total_targets']}")
