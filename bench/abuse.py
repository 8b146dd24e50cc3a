"""Probe the limits as an attacker would: two web processes, many source addresses, default limits.

Starts DynamoDB Local, migrates a SQLite file both servers share, and runs two
`manage.py runserver --noreload` processes (DEBUG=False, the default limits on) on two
ports. Requests leave from many loopback addresses (127.x.y.z: Linux routes the whole
127/8 to lo), alternating between the two servers, so every limit has to hold across
processes and addresses. Prints what each attack got beside what the limit allows.

    .venv/bin/python bench/abuse.py [--addresses 60]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import time
from itertools import cycle
from pathlib import Path

DB_FILE = Path(tempfile.mkdtemp(prefix="abuse_")) / "db.sqlite3"
os.environ["DATABASE_URL"] = f"sqlite:///{DB_FILE}"

from _setup import bench_environment  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "pw-Secret-123-abuse"


class Servers:
    """Two runserver processes; `call` sends a request from a given source address, alternating servers."""

    def __init__(self, host: str, prefix: str):
        from project.dynamo.local import free_port

        self.ports = [free_port(), free_port()]
        env = {
            **os.environ,
            "DEBUG": "False",
            "SECRET_KEY": "abuse-probe-only-secret-key-0123456789abcdef",
            "SECURE_SSL_REDIRECT": "False",
            "ENV_FILE": "/dev/null",
            "DYNAMODB_HOST": host,
            "DYNAMODB_TABLE_PREFIX": prefix,
            "RATE_LIMITS_ENABLED": "True",
            "LOG_LEVEL": "ERROR",
        }
        self.processes = [
            subprocess.Popen(
                [sys.executable, "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            for port in self.ports
        ]
        self._next = cycle(self.ports)
        for port in self.ports:
            deadline = time.monotonic() + 120
            while True:
                try:
                    self.call("GET", "/healthz-probe/", source="127.255.255.254", port=port)
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.5)

    def call(
        self, method: str, path: str, *, source: str, body=None, token=None, port=None, cookies: dict | None = None
    ) -> tuple[int, dict]:
        """One request; `cookies` (a client's cookie jar, e.g. its device cookie) is sent and updated."""
        connection = http.client.HTTPConnection("127.0.0.1", port or next(self._next), timeout=120)
        connection.source_address = (source, 0)
        headers = {"Content-Type": "application/json", "Host": "localhost"}
        if token:
            headers["Authorization"] = f"Token {token}"
        if cookies:
            headers["Cookie"] = "; ".join(f"{name}={value}" for name, value in cookies.items())
        connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
        answer = connection.getresponse()
        data = answer.read()
        if cookies is not None:
            for header in answer.headers.get_all("Set-Cookie") or []:
                name, _, rest = header.partition("=")
                cookies[name.strip()] = rest.split(";", 1)[0]
        connection.close()
        try:
            return answer.status, json.loads(data)
        except ValueError:
            return answer.status, {}

    def stop(self):
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            process.wait(timeout=30)


def address(n: int) -> str:
    return f"127.{10 + n // 62500}.{n // 250 % 250}.{n % 250 + 1}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--addresses", type=int, default=60, help="source addresses guessing one account")
    args = parser.parse_args()
    from django.conf import settings

    from project.dynamo import clients as dynamo

    with bench_environment() as host:
        servers = Servers(host, dynamo.endpoint().prefix)
        try:
            run(servers, args.addresses, settings)
        finally:
            servers.stop()


def run(servers: Servers, addresses: int, settings) -> None:
    def sign_up(name: str, source: str) -> int:
        return servers.call("POST", "/api/users/", source=source, body={"username": name, "password": PASSWORD})[0]

    def token(name: str, password: str, source: str, cookies: dict | None = None) -> tuple[int, dict]:
        body = {"username": name, "password": password}
        return servers.call("POST", "/api/auth/token/", source=source, body=body, cookies=cookies)

    rows = []
    # 1. Sign-ups from one address, alternating servers.
    statuses = [sign_up(f"spam{n}", "127.1.0.1") for n in range(12)]
    rows.append(("sign-ups from one address", statuses.count(201), len(statuses), settings.RATE_LIMITS["signup"][0]))
    for n, name in enumerate(("victim", "attacker", "poster")):
        assert sign_up(name, f"127.2.0.{n + 1}") == 201

    # 2. The reset trick: 9 wrong guesses, a log-in to one's own account, repeat.
    checked = 0
    for _ in range(4):
        for _ in range(9):
            checked += token("victim", "guess", "127.3.0.1")[0] == 400
        token("attacker", PASSWORD, "127.3.0.1")
    rows.append(("guesses from one address resetting with own log-ins", checked, 36, "LOGIN_FAILURE_LIMIT=10"))

    # 3. Many addresses guessing one account (case variants too), 3 guesses each; the owner's
    # client logged in before (it holds the account's device cookie), a new one did not.
    own_client: dict = {}
    assert token("victim", PASSWORD, "127.9.9.9", own_client)[0] == 200
    checked = 0
    for n in range(addresses):
        for name in ("victim", "VICTIM", "Victim"):
            checked += token(name, "guess", address(n))[0] == 400
    budget = f"LOGIN_UNTRUSTED_FAILURES={settings.LOGIN_UNTRUSTED_FAILURES}"
    rows.append((f"guesses from {addresses} addresses, 3 each", checked, 3 * addresses, budget))
    status, _ = token("victim", PASSWORD, "127.9.9.9", {})
    rows.append(("the owner from a new client during the attack (reset mail)", int(status == 200), 1, "0: refused"))
    status, answer = token("victim", PASSWORD, "127.9.9.9", own_client)
    rows.append(("the owner from their own client, during the attack", int(status == 200), 1, "must be 1"))
    status, notices = servers.call("GET", "/api/feed/", source="127.9.9.9", token=answer.get("token"))
    told = sum(entry.get("kind") == "notice" for entry in notices.get("results", notices.get("entries", [])))
    rows.append(("inbox notices the owner got", told, 1, "at most 1 per 6 h"))

    # 4. Lock the victim out: 10 addresses x 12 wrong guesses, then the owner.
    for n in range(10):
        for _ in range(12):
            token("victim", "guess", f"127.4.0.{n + 1}")
    status, _ = token("victim", PASSWORD, "127.9.9.8", own_client)
    rows.append(("owner's own client after 120 guesses from 10 addresses", int(status == 200), 1, "must be 1"))

    # 5. Comment spam from one (new) account, both servers, many addresses.
    _, poster = token("poster", PASSWORD, "127.5.0.1")
    posted = [
        servers.call("POST", "/api/comments/", source=address(n), body={"body": f"spam {n}"}, token=poster["token"])[0]
        for n in range(30)
    ]
    rows.append(("comments by one new account in a burst", posted.count(201), 30, settings.RATE_LIMITS["comment"][1]))

    # 6. Anonymous reads from one address.
    reads = [servers.call("GET", "/api/comments/", source="127.6.0.1")[0] for _ in range(80)]
    rows.append(("anonymous API reads from one address", reads.count(200), 80, "API_THROTTLE_ANON=60/min"))

    print(f"{'attack':<55} {'got':>5} {'of':>5}  limit")
    for label, got, tried, limit in rows:
        print(f"{label:<55} {got:>5} {tried:>5}  {limit}")


if __name__ == "__main__":
    main()
