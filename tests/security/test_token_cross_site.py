"""POST /api/auth/token/ refuses a browser's request another site sent (its visitors' log-in
budgets are not another page's to spend), and serves API clients that send no Origin."""

import pytest

pytestmark = pytest.mark.django_db

PASSWORD = "pw-Secret-123"
TOKEN = "/api/auth/token/"


@pytest.fixture(autouse=True)
def _clock_stands_still(manual_clock):
    """No window ends mid-test."""


@pytest.mark.parametrize(
    "headers",
    [{"HTTP_ORIGIN": "https://evil.example"}, {"HTTP_ORIGIN": "null"}, {"HTTP_SEC_FETCH_SITE": "cross-site"}],
)
def test_a_cross_site_log_in_is_refused_and_spends_nothing(api, make_user, limits, headers):
    make_user("victim")
    for _ in range(5):  # past LOGIN_FAILURE_LIMIT (3) had they counted
        answer = api.post(
            TOKEN, {"username": "victim", "password": "wrong"}, format="json", REMOTE_ADDR="10.8.0.1", **headers
        )
        assert answer.status_code == 403 and answer.json()["code"] == "permission_denied"
    own = api.post(TOKEN, {"username": "victim", "password": PASSWORD}, format="json", REMOTE_ADDR="10.8.0.1")
    assert own.status_code == 200 and "token" in own.json()


def test_this_sites_pages_and_clients_without_origin_log_in(api, make_user, limits):
    make_user("victim")
    for headers in ({"HTTP_ORIGIN": "http://testserver"}, {"HTTP_SEC_FETCH_SITE": "same-origin"}, {}):
        answer = api.post(TOKEN, {"username": "victim", "password": PASSWORD}, format="json", **headers)
        assert answer.status_code == 200 and "token" in answer.json()
