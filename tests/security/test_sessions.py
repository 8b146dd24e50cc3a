"""Each request reads its session and its account afresh (project.identity.sessions, the log-in
backend's get_user, project.identity.compiled_get): a session that expired, was deleted, or whose
account was deactivated is refused on the very next request, in the same thread and
database connection that served it a moment before."""

from datetime import timedelta

import pytest
from django.contrib.sessions.models import Session
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token

from project.identity.compiled_get import CompiledGet

pytestmark = pytest.mark.django_db


@pytest.fixture
def browser(make_user):
    alice = make_user("alice")
    client = Client()
    client.force_login(alice)
    assert client.get("/me/settings/").status_code == 200
    assert client.get("/api/me/").json()["username"] == "alice"
    return client, alice


def signed_in(client) -> bool:
    return client.get("/me/settings/").status_code == 200


def test_an_expired_session_is_refused_at_once(browser):
    client, _ = browser
    Session.objects.update(expire_date=timezone.now() - timedelta(seconds=1))
    assert not signed_in(client)
    assert client.get("/api/me/").status_code in (401, 403)


def test_a_deleted_session_is_refused_at_once(browser):
    client, _ = browser
    Session.objects.all().delete()
    assert not signed_in(client)


def test_a_deactivated_account_s_session_is_refused_at_once(browser):
    client, alice = browser
    alice.is_active = False
    alice.save()
    assert not signed_in(client)


def test_a_compiled_get_reads_what_the_orm_reads(make_user):
    alice, bob = make_user("alice"), make_user("bob")
    tokens = [Token.objects.create(user=alice), Token.objects.create(user=bob)]
    by_key = CompiledGet(Token, "key", placeholder="", related=("user",))
    for token in tokens:
        found = by_key.get(token.key)
        expected = Token.objects.select_related("user").get(key=token.key)
        assert found is not None and found.key == expected.key and found.created == expected.created
        assert found.user.__dict__.keys() >= {"username", "password", "is_active", "last_login"}
        assert {k: v for k, v in found.user.__dict__.items() if k != "_state"} == {
            k: v for k, v in expected.user.__dict__.items() if k != "_state"
        }
        assert not found._state.adding and found._state.db == "default"
    assert by_key.get("no-such-key") is None
    by_pk = CompiledGet(type(alice), "pk", placeholder=0)
    assert by_pk.get(str(bob.pk)).username == "bob"
    assert by_pk.get(bob.pk + 1000) is None
