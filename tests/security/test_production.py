"""Production-safe defaults, a Content-Security-Policy, views counted once an hour."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from actions.comments import comment_create
from project.clock import ManualClock, clock_override
from social import counters, services

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION_ENV = {
    "SECRET_KEY": "prod-like-" + "k7Qz2xW9pLmN4vR8sT1uY6" * 3,
    "ALLOWED_HOSTS": "social.example.com",
    "DJANGO_SETTINGS_MODULE": "config.settings",
}
NO_ENV_FILE = {"ENV_FILE": "/dev/null"}  # a developer's .env (DEBUG=True) must not change the defaults


def manage(*args, **env):
    base = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "SECRET_KEY", "SECURE_SSL_REDIRECT")}
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**base, **NO_ENV_FILE, **env},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_debug_defaults_to_false_and_then_requires_a_secret_key():
    result = manage("check", DJANGO_SETTINGS_MODULE="config.settings")
    assert result.returncode != 0
    assert "requires SECRET_KEY" in result.stderr
    shown = manage("shell", "-c", "from django.conf import settings; print(settings.DEBUG)", **PRODUCTION_ENV)
    assert shown.stdout.split()[-1] == "False", shown.stderr


def test_check_deploy_is_clean_with_the_production_settings():
    result = manage("check", "--deploy", "--fail-level", "WARNING", **PRODUCTION_ENV)
    assert result.returncode == 0, result.stdout + result.stderr


def test_make_dev_sets_development_mode_explicitly_and_make_run_production():
    script = (ROOT / "scripts" / "run.sh").read_text()
    dev, run = script.split('if [ "$MODE" = dev ]; then', 1)[1].split("else", 1)
    assert 'export DEBUG="${DEBUG:-True}"' in dev
    assert "export DEBUG=False" in run.split("fi", 1)[0]


def test_every_answer_has_a_content_security_policy(client, api):
    for answer in (client.get("/"), client.get("/accounts/login/"), api.get("/api/comments/"), client.get("/nope/")):
        policy = answer["Content-Security-Policy"]
        assert "script-src 'self'" in policy
        assert "unsafe-inline" not in policy.split("script-src", 1)[1].split(";")[0]


def test_api_docs_need_no_inline_script(client):
    page = client.get("/api/docs/").content.decode()
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", page)


def test_templates_have_no_inline_script():
    inline = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>|\son[a-z]+\s*=", re.IGNORECASE)
    offenders = [
        str(path.relative_to(ROOT))
        for app in ("project", "social", "notifications", "delivery")
        for path in (ROOT / app).rglob("*.html")
        if inline.search(path.read_text())
    ]
    assert offenders == []


def test_https_only_settings_when_debug_is_off():
    code = (
        "from django.conf import settings as s; "
        "print(s.SECURE_SSL_REDIRECT, s.SECURE_HSTS_SECONDS > 0, s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE)"
    )
    shown = manage("shell", "-c", code, **PRODUCTION_ENV)
    assert shown.stdout.split()[-4:] == ["True", "True", "True", "True"], shown.stderr
    behind_proxy = manage("shell", "-c", code, SECURE_SSL_REDIRECT="False", **PRODUCTION_ENV)
    assert behind_proxy.stdout.split()[-4] == "False"


def _views(comment_id):
    return counters.counter_value(key=counters.counter_key(kind=counters.VIEWS, object_id=comment_id))


def test_a_comment_view_counts_once_per_viewer_per_hour(client, make_user):
    alice, bob = make_user("alice"), make_user("bob")
    comment_id = comment_create(author_id=str(alice.pk), body="hi").comment_id
    for _ in range(5):
        client.get(f"/c/{comment_id}/", REMOTE_ADDR="10.0.0.1")
    assert _views(comment_id) == 1  # anonymous, one address
    client.get(f"/c/{comment_id}/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="9.9.9.9")
    assert _views(comment_id) == 1  # a forged forwarded header is not another viewer
    client.get(f"/c/{comment_id}/", REMOTE_ADDR="10.0.0.2")
    assert _views(comment_id) == 2
    client.force_login(bob)
    for _ in range(3):
        client.get(f"/c/{comment_id}/", REMOTE_ADDR="10.0.0.1")
    assert _views(comment_id) == 3


def test_a_reload_writes_nothing_to_dynamodb(client, make_user, monkeypatch):
    alice = make_user("alice")
    comment_id = comment_create(author_id=str(alice.pk), body="hi").comment_id
    client.get(f"/c/{comment_id}/")
    writes = []
    monkeypatch.setattr(services, "counter_increment", lambda **kwargs: writes.append(kwargs))
    for _ in range(3):
        client.get(f"/c/{comment_id}/")
    assert writes == []


def test_the_next_hour_counts_again(make_user, monkeypatch):
    comment_id = "c1"
    writes = []
    monkeypatch.setattr(services, "counter_increment", lambda **kwargs: writes.append(kwargs))
    with clock_override(ManualClock(1_000_000 * 3600.0)) as clock:
        assert services.comment_view_record(comment_id=comment_id, viewer="user:1")
        assert not services.comment_view_record(comment_id=comment_id, viewer="user:1")
        clock.advance(3600)
        assert services.comment_view_record(comment_id=comment_id, viewer="user:1")
    assert len(writes) == 2
