"""gunicorn's configuration: `gunicorn -c config/gunicorn.py` (the `web` program of deploy/supervisord.conf).

Every value is a setting read from the environment (and `.env`, like Django's settings):

- WEB_CONCURRENCY worker processes (default: the CPU count, at least 2). The web tier is
  CPU-bound Python (one GIL per process), so one process per core; DynamoDB calls wait
  on the network, which the threads cover.
- WEB_THREADS threads per process (default 5 x WEB_MAX_IN_FLIGHT): at most
  WEB_MAX_IN_FLIGHT of them work on requests (project.serving.shedding); the others hold the
  requests waiting for a slot (a burst of 4x the slots waits whole), answer the refusals
  (503 + Retry-After) and read request bodies, which come in before a request takes a slot.
  A connection that finds no free thread waits in gthread's own queue, where nothing
  bounds its wait: the threads must cover the waiting, so raise WEB_THREADS with
  WEB_MAX_IN_FLIGHT. Clients trickling bodies hold a thread each for WEB_BODY_TIMEOUT at
  most, and one address at most WEB_BODY_READS_PER_ADDRESS (8) of them (429 beyond); a
  buffering proxy in front (BUFFERING_PROXY, below) keeps them out altogether.
- POOL_THREADS (32) more threads at most per process, not gunicorn's: the pools to which
  requests hand work they wait on (a page's reads fanned out, the like fold's writes), by
  tier (project.serving.pools). A pool thread holds no database connection and no slot;
  `worker_exit` closes the pools, giving their queued work 5 s.
- WEB_TIMEOUT (30 s): a worker whose main loop is silent that long is killed and
  replaced; WEB_GRACEFUL_TIMEOUT (20 s): how long a stopping worker finishes requests.
- WEB_KEEPALIVE (75 s): idle keep-alive connections stay open longer than a client or a
  load balancer (AWS ALB: 60 s) keeps them, so the server never closes one just as a
  request is sent on it.
- WEB_BACKLOG (256): connections the kernel holds before gunicorn accepts them.
- HOST, PORT: the address bound (default 127.0.0.1:8000).
- BUFFERING_PROXY: the buffering proxy in front (`nginx`: deploy/entrypoint.sh runs the image's,
  deploy/nginx.conf; `alb`, or any other name, one of the operator's). With the production
  settings (DEBUG off) and not LOCAL_PLAIN_HTTP (`make run`, on the loopback address), gunicorn
  refuses to start without one: it reads a body only as its threads allow
  (project.serving.shedding), and a proxy that reads each request whole keeps slow clients
  away from them.

The application is loaded once in the master (`preload_app`) and each worker serves a
warm-up request to itself before it accepts connections (project.serving.hooks.warm_up), so
a fresh worker does not serve its first seconds slowly.

Under supervisord, gunicorn's own lines (and its access log) start with `web | `, like
every line the programs write (project.operations.logs.process_prefix). When the master is killed,
its workers notice their parent changed within a second and exit, letting go of the
port; the new master supervisord starts tries to bind it for 5 s (gunicorn's own
retries), and is started again if that was not enough. No SO_REUSEPORT: with it, a
second `make run` (another checkout) would share the port silently instead of failing.
"""

import multiprocessing
import os
from pathlib import Path
from typing import Any

import environ
from gunicorn.glogging import Logger

from project.operations.logs import process_prefix

env = environ.Env()
environ.Env.read_env(env.str("ENV_FILE", default=str(Path(__file__).resolve().parents[1] / ".env")), overwrite=False)

_max_in_flight = env.int("WEB_MAX_IN_FLIGHT", default=8)

wsgi_app = "config.wsgi:application"
bind = [f"{env.str('HOST', default='127.0.0.1')}:{env.int('PORT', default=8000)}"]
workers = env.int("WEB_CONCURRENCY", default=max(2, multiprocessing.cpu_count()))
worker_class = "gthread"
threads = env.int("WEB_THREADS", default=5 * _max_in_flight)
timeout = env.int("WEB_TIMEOUT", default=30)
graceful_timeout = env.int("WEB_GRACEFUL_TIMEOUT", default=20)
keepalive = env.int("WEB_KEEPALIVE", default=75)
backlog = env.int("WEB_BACKLOG", default=256)
preload_app = True
# Heartbeat files in memory, not on a disk that may stall.
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None
# No shared control socket in the home directory (two checkouts on one machine would collide).
control_socket_disable = True
accesslog = env.str("WEB_ACCESS_LOG", default="-") or None
errorlog = "-"
proc_name = "dynamo-social"


# The combined log format without `%(u)s`: gunicorn fills it from a Basic-auth header,
# which this site never uses, so any client could write what it likes there (newlines
# included: fake log lines). The request line and headers cannot hold a line break.
access_log_format = '%(h)s %(l)s - %(t)s "%(r)s" %(s)s %(b)s "%(f)s" "%(a)s"'


def _printable(value: Any) -> Any:
    """A log atom with every control character written as an escape (`\\x0a`), so no
    client-chosen text can start a line of its own."""
    if isinstance(value, str) and not value.isprintable():
        return "".join(char if char.isprintable() else f"\\x{ord(char):02x}" for char in value)
    return value


class ProcessNamedLogger(Logger):  # type: ignore[misc]  # gunicorn ships no annotations
    error_fmt = process_prefix() + Logger.error_fmt
    access_fmt = process_prefix() + Logger.access_fmt

    def atoms(self, resp: Any, req: Any, environ: dict[str, Any], request_time: Any) -> dict[str, Any]:
        return {name: _printable(value) for name, value in super().atoms(resp, req, environ, request_time).items()}


logger_class = ProcessNamedLogger


def post_worker_init(worker: Any) -> None:
    from project.serving.hooks import warm_up

    warm_up(worker.wsgi, log=worker.log)


def buffering_proxy_check() -> None:
    """Refuse to serve the internet without a declared buffering proxy (BUFFERING_PROXY)."""
    production = not env.bool("DEBUG", default=False) and not env.bool("LOCAL_PLAIN_HTTP", default=False)
    if production and not env.str("BUFFERING_PROXY", default="").strip():
        raise RuntimeError(
            "BUFFERING_PROXY is not set: in production gunicorn serves behind a proxy that reads each "
            "request whole (nginx: the image's default; an AWS ALB: BUFFERING_PROXY=alb). "
            "docs/how-to/run-in-production.md, production checklist."
        )


def on_starting(server: Any) -> None:
    from project.operations.metrics import metrics_dir_prepare

    buffering_proxy_check()  # gunicorn prints the error and exits 1

    metrics_dir_prepare()


def child_exit(server: Any, worker: Any) -> None:
    from project.operations.metrics import child_exit as metrics_child_exit

    metrics_child_exit(server, worker)
