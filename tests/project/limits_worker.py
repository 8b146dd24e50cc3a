"""A second web process for the cross-process limit test: Django's test client in its own interpreter.

Run as `python -m tests.project.limits_worker <start file> <requests>` with DYNAMODB_HOST and
DYNAMODB_TABLE_PREFIX naming the test's tables. It waits until the start file exists (so two
workers start together), sends the requests, and prints one JSON line of the statuses seen.
"""

import json
import os
import sys
import time
from pathlib import Path


def main(start: Path, requests: int) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")
    import django

    django.setup()
    from django.test import Client

    from project.clock import ManualClock, clock_override
    from project.limits.store import limit_hit

    # Both workers stand at the same instant the test chose: no window ends mid-test.
    clock_override(ManualClock(float(os.environ["LIMITS_WORKER_NOW"]))).__enter__()
    client = Client()
    while not start.exists():
        time.sleep(0.01)
    api, writes = [], []
    for _ in range(requests):
        api.append(client.get("/api/comments/", REMOTE_ADDR="10.7.7.7").status_code)
        writes.append(limit_hit(name="comment", subject="user:7", rules="15/hour").allowed)
    print(json.dumps({"api": api, "writes": writes}))


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]))
