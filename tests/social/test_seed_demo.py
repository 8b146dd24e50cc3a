import pytest
from django.core.management import call_command

from social import selectors

pytestmark = pytest.mark.django_db


def test_seed_demo_fills_an_empty_timeline_once(capsys, django_user_model):
    call_command("seed_demo", "--if-empty")
    out = capsys.readouterr().out
    assert "alice / " in out and "admin / " in out
    first = selectors.comment_timeline(viewer_id=None, limit=100).results
    assert len(first) == 5
    assert any(comment.like_count > 0 for comment in first)
    assert django_user_model.objects.get(username="admin").is_staff
    call_command("seed_demo", "--if-empty")
    assert "no demo data added" in capsys.readouterr().out
    assert len(selectors.comment_timeline(viewer_id=None, limit=100).results) == 5


def test_seed_demo_runs_with_the_production_write_limits_on(capsys, settings):
    """`make run` seeds with every limit on: the demo's new accounts post faster than a person may."""
    settings.RATE_LIMITS_ENABLED = True
    call_command("seed_demo", "--if-empty")
    assert len(selectors.comment_timeline(viewer_id=None, limit=100).results) == 5


def test_seeded_accounts_get_random_passwords_printed_once(capsys, django_user_model):
    """No published password: each account created gets its own random one, and a second run
    does not change (or print) the passwords of the accounts it finds."""
    call_command("seed_demo")
    printed = dict(line.strip().split(" / ") for line in capsys.readouterr().out.splitlines() if " / " in line)
    printed = {name: password.removesuffix(" (staff, /admin/)") for name, password in printed.items()}
    assert len(set(printed.values())) == len(printed) == 5
    for name, password in printed.items():
        assert django_user_model.objects.get(username=name).check_password(password)
        assert len(password) >= 16
    call_command("seed_demo")
    assert "existing account" in capsys.readouterr().out
    assert django_user_model.objects.get(username="admin").check_password(printed["admin"])
