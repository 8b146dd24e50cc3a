"""How the production server is configured: settings, config/gunicorn.py, warm-up (load shedding: test_shedding.py)."""

import os
import runpy
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest

from config.wsgi import application
from project.serving import hooks as serving

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def settings_in_subprocess(code: str, **env) -> subprocess.CompletedProcess:
    own = ("DEBUG", "SECRET_KEY", "SECURE_", "HOST", "PORT", "DYNAMODB_")
    base = {k: v for k, v in os.environ.items() if not k.startswith(own)}
    return subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); from django.conf import settings as s; {code}"],
        cwd=ROOT,
        env={**base, "ENV_FILE": "/dev/null", "DJANGO_SETTINGS_MODULE": "config.settings", **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_secret_key_can_come_from_a_file(tmp_path):
    key_file = tmp_path / "secret_key"
    key_file.write_text("from-a-file-" + "x" * 50 + "\n")
    shown = settings_in_subprocess("print(s.SECRET_KEY)", SECRET_KEY_FILE=str(key_file))
    assert shown.stdout.strip() == "from-a-file-" + "x" * 50, shown.stderr


def test_plain_http_is_allowed_on_the_loopback_address_only():
    shown = settings_in_subprocess(
        "print(s.DEBUG, s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_HSTS_SECONDS)",
        SECRET_KEY="k" * 50,
        LOCAL_PLAIN_HTTP="True",
    )
    assert shown.stdout.split() == ["False", "False", "False", "False", "0"], shown.stderr
    refused = settings_in_subprocess("print(1)", SECRET_KEY="k" * 50, LOCAL_PLAIN_HTTP="True", HOST="0.0.0.0")
    assert refused.returncode != 0
    assert "LOCAL_PLAIN_HTTP is for the loopback address only, not HOST=0.0.0.0" in refused.stderr
    production = settings_in_subprocess("print(s.SECURE_SSL_REDIRECT, s.SESSION_COOKIE_SECURE)", SECRET_KEY="k" * 50)
    assert production.stdout.split() == ["True", "True"], production.stderr


def test_ports_are_settings():
    shown = settings_in_subprocess(
        "print(s.PORT, s.DYNAMODB_HOST)", SECRET_KEY="k" * 50, PORT="9001", DYNAMODB_PORT="9002"
    )
    assert shown.stdout.split() == ["9001", "http://127.0.0.1:9002"], shown.stderr


def test_gunicorn_config_reads_the_web_settings(monkeypatch):
    monkeypatch.setenv("ENV_FILE", "/dev/null")
    for name, value in {"WEB_CONCURRENCY": "3", "WEB_THREADS": "5", "HOST": "127.0.0.2", "PORT": "9100"}.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("WEB_KEEPALIVE", "90")
    config = runpy.run_path(str(ROOT / "config/gunicorn.py"))
    assert (config["workers"], config["threads"], config["bind"], config["keepalive"]) == (3, 5, ["127.0.0.2:9100"], 90)
    assert config["worker_class"] == "gthread" and config["preload_app"] is True


def test_gunicorn_defaults_follow_the_cpu_count_and_leave_threads_for_refusals(monkeypatch):
    monkeypatch.setenv("ENV_FILE", "/dev/null")
    for name in ("WEB_CONCURRENCY", "WEB_THREADS", "WEB_MAX_IN_FLIGHT", "HOST", "PORT"):
        monkeypatch.delenv(name, raising=False)
    config = runpy.run_path(str(ROOT / "config/gunicorn.py"))
    assert config["workers"] == max(2, os.cpu_count())
    assert config["threads"] == 40  # 5 x WEB_MAX_IN_FLIGHT (8): the slots, a burst waiting, refusals, bodies
    assert config["bind"] == ["127.0.0.1:8000"]


def test_gunicorn_refuses_to_start_in_production_without_a_buffering_proxy(monkeypatch):
    """With the production settings, off the loopback's plain HTTP, gunicorn's first hook refuses
    to go on (gunicorn prints the error and exits 1) until BUFFERING_PROXY names the proxy."""
    monkeypatch.setenv("ENV_FILE", "/dev/null")
    for name in ("DEBUG", "LOCAL_PLAIN_HTTP", "BUFFERING_PROXY"):
        monkeypatch.delenv(name, raising=False)
    config = runpy.run_path(str(ROOT / "config/gunicorn.py"))
    with pytest.raises(RuntimeError, match="BUFFERING_PROXY is not set"):
        config["on_starting"](object())
    for name, value in (("BUFFERING_PROXY", "alb"), ("LOCAL_PLAIN_HTTP", "True"), ("DEBUG", "True")):
        with monkeypatch.context() as scoped:
            scoped.setenv(name, value)
            runpy.run_path(str(ROOT / "config/gunicorn.py"))["buffering_proxy_check"]()  # no error


# Transactional: the real WSGI handler closes a connection it finds inside a transaction when
# a request starts (the test client does not), and a test's atomic block would be one.
@pytest.mark.django_db(transaction=True)
def test_warm_up_serves_the_worker_its_first_requests():
    assert serving.warm_up(application) == {"/readyz": 200, "/": 200, "/api/comments/": 200}


def test_every_models_client_is_made_up_front_so_no_request_makes_one():
    from botocore.session import Session

    from project.dynamo import clients as dynamo
    from project.dynamo.schema.registry import registered_models

    dynamo.point_models_at(dynamo.endpoint().host)  # every model as a fresh worker has it: no client yet
    models = registered_models()
    assert dynamo.clients_make() == len(models) + 2  # and the transactions' and the health probe's
    made = []
    real = Session.create_client

    def counted(self, *args, **kwargs):
        made.append(args)
        return real(self, *args, **kwargs)

    with mock.patch.object(Session, "create_client", counted):
        for model in models:
            model.describe_table()  # a call of each model on its own client
    assert made == []
    assert dynamo.clients_make() == 0


def test_a_worker_makes_its_clients_before_its_first_request():
    with mock.patch("project.dynamo.clients.clients_make", return_value=30) as clients_make:
        serving.warm_up(lambda environ, start_response: [])
    clients_make.assert_called_once_with()


def test_warm_up_never_stops_a_worker_from_starting():
    def broken(environ, start_response):
        raise RuntimeError("no database")

    assert serving.warm_up(broken) == dict.fromkeys(serving.WARM_UP_PATHS, 0)


def test_the_memoised_user_agent_sanitiser_builds_the_same_header(monkeypatch):
    from botocore import useragent

    from project.dynamo import clients as dynamo

    memoised = useragent.sanitize_user_agent_string_component
    assert hasattr(memoised, "cache_info")
    creator = dynamo.client()._user_agent_creator
    header = creator.to_string()
    monkeypatch.setattr(useragent, "sanitize_user_agent_string_component", memoised.__wrapped__)
    assert creator.to_string() == header
    assert "Botocore/" in header


def test_no_client_can_write_a_line_of_its_own_into_the_access_log(monkeypatch, tmp_path):
    """A Basic-auth user name (gunicorn's `%(u)s`) or a control character in a header is
    never written raw: one request, one access-log line."""
    import base64
    import datetime
    from types import SimpleNamespace

    from gunicorn.config import Config

    monkeypatch.setenv("ENV_FILE", "/dev/null")
    module = runpy.run_path(str(ROOT / "config/gunicorn.py"))
    config = Config()
    config.set("accesslog", str(tmp_path / "access.log"))
    config.set("access_log_format", module["access_log_format"])
    log = module["ProcessNamedLogger"](config)
    forged = '\n10.0.0.1 - admin [01/Jan/2026:00:00:00 +0000] "POST /admin/ HTTP/1.1" 200 0'
    basic = base64.b64encode(f"{forged}:password".encode()).decode()
    environ = {
        "REQUEST_METHOD": "GET",
        "RAW_URI": "/",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "203.0.113.9",
        "HTTP_AUTHORIZATION": f"Basic {basic}",
        "HTTP_USER_AGENT": "agent\rwith\x1bcontrols",
    }
    request = SimpleNamespace(headers=[("AUTHORIZATION", f"Basic {basic}")], path="/", query="")
    response = SimpleNamespace(status="200 OK", sent=2, headers=[], response_length=2)
    log.access(response, request, environ, datetime.timedelta(milliseconds=5))
    for handler in log.access_log.handlers:
        handler.flush()
    lines = (tmp_path / "access.log").read_text().splitlines()
    assert len(lines) == 1 and "admin" not in lines[0]
    assert "agent\\x0dwith\\x1bcontrols" in lines[0]
