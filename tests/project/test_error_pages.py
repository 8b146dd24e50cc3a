"""Friendly error pages with DEBUG off (the test settings are the production ones)."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied, SuspiciousOperation
from django.http import Http404
from django.test import Client, RequestFactory

from project.errors import api_exception_handler
from project.http import views

pytestmark = pytest.mark.django_db


def test_an_unknown_page_is_a_friendly_404_without_the_url_patterns(client):
    answer = client.get("/no-such-page/")
    assert answer.status_code == 404
    page = answer.content.decode()
    assert "Page not found" in page and "Back to the timeline" in page
    assert "URLconf" not in page and "api/schema" not in page


def test_an_unknown_comment_is_the_same_friendly_404(client):
    answer = client.get("/c/00000000-0000-0000-0000-000000000000/")
    assert answer.status_code == 404
    assert "Page not found" in answer.content.decode()


def test_an_unknown_api_path_still_answers_json(client):
    answer = client.get("/api/no-such-thing/")
    assert answer.status_code == 404
    assert answer.json() == {"detail": "Not found.", "code": "not_found"}


@pytest.mark.parametrize(
    ("handler", "status", "text"),
    [
        (lambda request: views.permission_denied(request, PermissionDenied()), 403, "You can't open this page"),
        (lambda request: views.bad_request(request, SuspiciousOperation()), 400, "could not be understood"),
        (views.server_error, 500, "Something went wrong on our side"),
    ],
)
def test_403_400_and_500_pages_are_the_sites_own(handler, status, text):
    request = RequestFactory().get("/somewhere/")
    request.user = AnonymousUser()
    answer = handler(request)
    assert answer.status_code == status
    assert text in answer.content.decode()


def test_every_page_names_its_favicon(client):
    page = client.get("/").content.decode()
    assert 'rel="icon"' in page and "favicon.svg" in page


def test_a_stale_form_is_a_friendly_403_that_says_what_to_do(make_user):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(make_user("stale"))
    answer = browser.post("/", {"body": "from a page opened before logging in again"})
    assert answer.status_code == 403
    page = answer.content.decode()
    assert "That form was out of date" in page and "reload the page" in page
    assert "CSRF verification failed" not in page


def test_too_many_failed_log_ins_get_a_friendly_page(client, make_user, settings):
    from project.clock import ManualClock, clock_override

    settings.LOGIN_FAILURE_LIMIT = 2
    make_user("guessed")
    with clock_override(ManualClock()):  # no log-in window ends mid-test
        for _ in range(3):
            answer = client.post("/accounts/login/", {"username": "guessed", "password": "wrong"})
    assert answer.status_code == 429
    page = answer.content.decode()
    assert "Logging in is paused" in page and "Back to the timeline" in page


@pytest.mark.parametrize(
    "raised,status,code",
    [(Http404("No such thing."), 404, "not_found"), (PermissionDenied(), 403, "permission_denied")],
)
def test_django_errors_raised_in_an_api_view_answer_json_with_a_code(raised, status, code):
    answer = api_exception_handler(raised, {})
    assert answer is not None and answer.status_code == status
    assert answer.data["code"] == code and answer.data["detail"]
