"""A throwaway PostgreSQL server for the test suite and the benchmarks.

The suite's relational store is PostgreSQL, as in production (`tests/settings.py`). Like
DynamoDB Local (`project/dynamo/local.py`), the server is this process's own: `initdb` into
a fresh temporary folder, started on a free port, stopped and the folder removed at exit,
so parallel runs never meet and nothing has to be running beforehand. It trusts every
connection on its unix socket (in that folder) and on 127.0.0.1, and skips fsync,
full-page writes and synchronous commit: its data dies with it anyway.

PostgreSQL refuses to run as root (a superuser's SQL could then do anything root can), and
`make test` runs as root on CI. So as root `initdb` and the server run as the `postgres`
system user that Debian's package creates, owning the folder: `subprocess.Popen(user=...)`
switches user in the child right before it execs, so the process this module holds *is*
the server and its fast-shutdown signal (SIGINT) reaches it. `runuser` would stand in
between: it ignores SIGINT, and on SIGTERM passes SIGTERM on (a smart shutdown, waiting for
every client to leave) and kills the server two seconds later. Not as root, they run as
the current user.

    url = postgres_database_url("two_instances")  # a fresh database on the suite's server

`TEST_DATABASE_URL` names an existing server instead (its database is the suite's, the
fresh ones are created beside it).
"""

from __future__ import annotations

import atexit
import os
import pwd
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO
from urllib.parse import urlsplit

import psycopg
from psycopg import sql

from project.dynamo.local import free_port

SERVER_MISSING = (
    "PostgreSQL server binaries (initdb, postgres) not found: install Debian's `postgresql` package "
    "(sudo apt-get install -y postgresql) or set TEST_DATABASE_URL to a running server."
)
# The suite's database on the throwaway server (pytest-django creates `test_<this>` beside it).
SUITE_DATABASE = "dynamo_social"
SUPERUSER = "postgres"
START_SECONDS = 120.0  # a busy 2-core machine starts it in seconds; all of this is a hang
DATABASE_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


class PostgresError(RuntimeError):
    pass


def bin_directory() -> Path:
    """The folder of `initdb` and `postgres`: `pg_config --bindir`, else the newest /usr/lib/postgresql/*/bin."""
    candidates: list[Path] = []
    pg_config = shutil.which("pg_config")
    if pg_config:
        try:
            answer = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=True)
            candidates.append(Path(answer.stdout.strip()))
        except (OSError, subprocess.CalledProcessError):
            pass  # a pg_config without a server beside it: look in Debian's folders

    def version(folder: Path) -> tuple[int, ...]:
        return tuple(int(part) for part in folder.parent.name.split(".") if part.isdigit())

    candidates += sorted(Path("/usr/lib/postgresql").glob("*/bin"), key=version, reverse=True)
    for folder in candidates:
        if (folder / "initdb").is_file() and (folder / "postgres").is_file():
            return folder
    raise PostgresError(SERVER_MISSING)


@dataclass(frozen=True)
class _Account:
    """Whom initdb and the server run as: the `postgres` system user when this process is root."""

    uid: int
    gid: int


def _server_account() -> _Account | None:
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam(SUPERUSER)
    except KeyError:
        raise PostgresError(
            "Running as root, PostgreSQL needs the `postgres` system user (Debian's `postgresql` package "
            "creates it): the server refuses to run as root."
        ) from None
    return _Account(uid=entry.pw_uid, gid=entry.pw_gid)


@dataclass
class PostgresServer:
    folder: Path
    port: int
    process: subprocess.Popen[bytes]
    log: Path
    _stopped: bool = field(default=False, repr=False)

    def url(self, database: str) -> str:
        return f"postgres://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def stop(self) -> None:
        """Stop the server (a fast shutdown: open sessions are ended) and remove its folder."""
        if self._stopped:
            return
        self._stopped = True
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        shutil.rmtree(self.folder, ignore_errors=True)


def _log_tail(log: Path) -> str:
    try:
        return log.read_text(errors="replace")[-2000:]
    except OSError:
        return ""


def _accepts_connections(port: int) -> bool:
    try:
        with psycopg.connect(host="127.0.0.1", port=port, user=SUPERUSER, dbname="postgres", connect_timeout=5):
            return True
    except psycopg.OperationalError:
        return False  # not listening yet, or "the database system is starting up"


def _launch(
    bindir: Path, data: Path, folder: Path, log: Path, out: IO[bytes], account: _Account | None
) -> PostgresServer | None:
    """Start the server on a free port and wait until it accepts connections; None when it
    exited at once (another process took the port meanwhile)."""
    port = free_port()
    command = [
        str(bindir / "postgres"),
        "-D",
        str(data),
        "-p",
        str(port),
        "-h",
        "127.0.0.1",
        "-k",
        str(folder),
        "-c",
        "fsync=off",
        "-c",
        "full_page_writes=off",
        "-c",
        "synchronous_commit=off",
        # Whole instances share it (tests/project/test_two_instances.py): each gunicorn thread
        # and worker holds a connection, and the default 100 runs out under their bursts.
        "-c",
        "max_connections=400",
    ]
    # Its own session: a Ctrl-C meant for pytest does not reach it; the exit handler stops it.
    process = subprocess.Popen(
        command,
        cwd=folder,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        user=account.uid if account else None,
        group=account.gid if account else None,
        extra_groups=[] if account else None,
    )
    server = PostgresServer(folder=folder, port=port, process=process, log=log)
    deadline = time.monotonic() + START_SECONDS
    while not _accepts_connections(port):
        if process.poll() is not None:
            return None
        if time.monotonic() > deadline:
            server.stop()
            raise PostgresError(f"PostgreSQL did not accept connections within {START_SECONDS:.0f} s")
        time.sleep(0.1)
    return server


def start() -> PostgresServer:
    """initdb into a fresh temporary folder and start a server on a free 127.0.0.1 port."""
    bindir = bin_directory()
    account = _server_account()
    folder = Path(tempfile.mkdtemp(prefix="postgres-"))
    log = folder / "server.log"
    try:
        if account:
            os.chown(folder, account.uid, account.gid)
        data = folder / "data"
        with log.open("ab") as out:
            initdb = subprocess.run(
                [
                    str(bindir / "initdb"),
                    "-D",
                    str(data),
                    "-U",
                    SUPERUSER,
                    "--auth=trust",
                    "--encoding=UTF8",
                    "--locale=C.UTF-8",
                    "--no-sync",
                ],
                cwd=folder,
                stdout=out,
                stderr=subprocess.STDOUT,
                user=account.uid if account else None,
                group=account.gid if account else None,
                extra_groups=[] if account else None,
            )
            if initdb.returncode != 0:
                raise PostgresError(f"initdb failed ({initdb.returncode}):\n{_log_tail(log)}")
            for _ in range(3):
                server = _launch(bindir, data, folder, log, out, account)
                if server:
                    return server
        raise PostgresError(f"PostgreSQL exited while starting:\n{_log_tail(log)}")
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise


_lock = threading.Lock()
_server: PostgresServer | None = None


def server() -> PostgresServer:
    """This process's throwaway server: started on first use, stopped (its folder removed) at exit."""
    global _server
    with _lock:
        if _server is None:
            _server = start()
            atexit.register(_server.stop)
        return _server


def _with_database(url: str, database: str) -> str:
    return urlsplit(url)._replace(path=f"/{database}").geturl()


def suite_database_url(database: str | None = None) -> str:
    """The suite's database as a DATABASE_URL: TEST_DATABASE_URL when set, else one on this
    process's throwaway server; with `database`, that database on the same server (a process
    a test starts uses the test database: `suite_database_url(connection.settings_dict["NAME"])`)."""
    url = os.environ.get("TEST_DATABASE_URL") or server().url(SUITE_DATABASE)
    return _with_database(url, database) if database else url


def postgres_database_url(name: str) -> str:
    """A fresh, empty database `name` on the suite's server (see `suite_database_url`), as a
    DATABASE_URL. One of that name is dropped first, its connections ended; run `migrate`
    against it to get the tables."""
    if not DATABASE_NAME.match(name):
        raise ValueError(f"database name {name!r}: lower-case letters, digits and _ only, at most 63")
    base = suite_database_url()
    with psycopg.connect(_with_database(base, "postgres"), autocommit=True) as maintenance:
        maintenance.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
        maintenance.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    return _with_database(base, name)


def postgres_database_drop(url: str) -> None:
    """Drop the database `url` names (made by `postgres_database_url`), ending its connections."""
    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(_with_database(url, "postgres"), autocommit=True) as maintenance:
        maintenance.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
