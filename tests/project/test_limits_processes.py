"""Two web processes at once share every limit: the counts are in DynamoDB, not in either process."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from project.dynamo import clients as dynamo

ROOT = Path(__file__).resolve().parents[2]


def test_two_processes_at_once_allow_the_limit_once_not_twice(dynamodb, tmp_path):
    start = tmp_path / "start"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.settings",
        "ENV_FILE": "/dev/null",
        "DATABASE_URL": "sqlite:///:memory:",  # anonymous requests and limits must not need the relational DB
        "DYNAMODB_HOST": dynamodb,
        "DYNAMODB_TABLE_PREFIX": dynamo.endpoint().prefix,
        "RATE_LIMITS_ENABLED": "True",
        "API_THROTTLE_ANON": "20/hour",
        "LOG_LEVEL": "ERROR",
        "LIMITS_WORKER_NOW": str(time.time()),
    }
    workers = [
        subprocess.Popen(
            [sys.executable, "-m", "tests.project.limits_worker", str(start), "25"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    start.touch()
    results = []
    for worker in workers:
        out, err = worker.communicate(timeout=600)
        assert worker.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))

    api = [status for result in results for status in result["api"]]
    assert api.count(200) == 20 and api.count(429) == 30  # one budget for both processes
    writes = [allowed for result in results for allowed in result["writes"]]
    assert writes.count(True) == 15
