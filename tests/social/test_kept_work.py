"""Nothing a person sends is lost to an ended session or an out-of-date form: a like is done
after the log-in, a post's text is back in its box; a like form with no action changes
nothing; names log in in any case."""

import time
from http.cookies import SimpleCookie

import pytest
from django.conf import settings as django_settings
from django.contrib.sessions.models import Session
from django.test import Client

from actions.comments import comment_create
from project.clock import ManualClock, clock_override
from social import selectors
from social.drafts import LIKE_KEPT_SECONDS

pytestmark = pytest.mark.django_db

PASSWORD = "pw-Secret-123"


def log_in(client, username: str, next_path: str):
    return client.post("/accounts/login/", {"username": username, "password": PASSWORD, "next": next_path})


@pytest.mark.parametrize("action,liked", [("like", True), ("unlike", False)])
def test_a_like_sent_after_the_session_ended_is_done_after_logging_in(client, alice, make_user, action, liked):
    bob = make_user("bob")
    comment = comment_create(author_id=str(alice.pk), body="Like me later").comment_id
    if action == "unlike":
        client.force_login(bob)
        client.post(f"/c/{comment}/like/", {"action": "like", "next": "/"})
        client.logout()

    sent = client.post(f"/c/{comment}/like/", {"action": action, "next": "/"})

    assert sent.status_code == 302 and sent["Location"] == f"/accounts/login/?next=%2Fc%2F{comment}%2Flike%2F"
    assert "Log in to" in client.get(sent["Location"]).content.decode()
    back = log_in(client, "bob", f"/c/{comment}/like/")
    assert back["Location"] == f"/c/{comment}/like/"
    landed = client.get(back["Location"], follow=True)
    assert landed.redirect_chain[-1][0] == f"/c/{comment}/#c-{comment}"
    assert f"You {action}d the comment." in landed.content.decode()
    assert selectors.like_state(comment_id=comment, user_id=str(bob.pk)) == (int(liked), liked)


def test_coming_back_to_the_like_address_with_nothing_kept_changes_nothing(client, alice, make_user):
    bob = make_user("bob")
    comment = comment_create(author_id=str(alice.pk), body="Not liked by a link").comment_id
    client.force_login(bob)

    landed = client.get(f"/c/{comment}/like/", follow=True)

    assert landed.redirect_chain[-1][0] == f"/c/{comment}/"
    assert "Nothing was changed" in landed.content.decode()
    assert selectors.like_state(comment_id=comment, user_id=str(bob.pk)) == (0, False)


def test_a_like_form_without_its_action_is_refused_and_changes_nothing(client, alice, make_user):
    bob = make_user("bob")
    comment = comment_create(author_id=str(alice.pk), body="Which was it?").comment_id
    client.force_login(bob)

    answer = client.post(f"/c/{comment}/like/", {"next": "/"})

    assert answer.status_code == 400
    assert "neither like nor unlike" in answer.content.decode()
    assert selectors.like_state(comment_id=comment, user_id=str(bob.pk)) == (0, False)


@pytest.mark.parametrize("where", ["timeline", "reply"])
def test_text_posted_while_logged_out_is_back_in_the_box_after_logging_in(client, alice, where):
    path = "/" if where == "timeline" else f"/c/{comment_create(author_id=str(alice.pk), body='Parent').comment_id}/"

    sent = client.post(path, {"body": "Typed before the session ended"})

    login_page = client.get(sent["Location"]).content.decode()
    assert "your text will be back in the box" in login_page
    landed = client.get(log_in(client, "alice", path)["Location"])
    text = landed.content.decode()
    assert "Typed before the session ended</textarea>" in text
    assert "It is back in the box" in text
    assert "Typed before the session ended</textarea>" not in client.get(path).content.decode()  # shown once


def test_text_sent_with_an_out_of_date_form_is_kept(alice):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    browser.get("/")  # the CSRF cookie

    refused = browser.post(
        "/", {"body": "Sent with a stale token", "csrfmiddlewaretoken": "x" * 64}, HTTP_ORIGIN="http://testserver"
    )

    assert refused.status_code == 403
    assert "Your text is kept" in refused.content.decode()
    assert "Sent with a stale token</textarea>" in browser.get("/").content.decode()


def test_an_over_long_text_keeps_every_character_and_says_by_how_much(client, alice):
    client.force_login(alice)
    page = client.get("/").content.decode()
    assert "maxlength" not in page  # a browser would cut a long paste silently
    assert 'data-max-length="2000"' in page

    answer = client.post("/", {"body": "x" * 5000})

    assert "At most 2000 characters: this has 5000." in answer.content.decode()
    assert "x" * 5000 + "</textarea>" in answer.content.decode()


def test_names_log_in_in_any_case(client, alice):
    answer = client.post("/accounts/login/", {"username": "ALICE", "password": PASSWORD})

    assert answer.status_code == 302
    assert client.get("/").context["user"] == alice


def test_what_strangers_may_keep_is_limited_per_address(alice, settings):
    """Each text or like kept for someone not logged in may be a new session row: an address
    past LIMIT_ANONYMOUS_KEEP is told, and nothing more is stored for it."""
    settings.RATE_LIMITS_ENABLED = True
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "anonymous_keep": ("2/hour", "")}
    comment = comment_create(author_id=str(alice.pk), body="Liked by strangers").comment_id
    stranger = "203.0.113.9"
    for n in range(2):
        kept = Client(REMOTE_ADDR=stranger).post("/", {"body": f"Draft {n}"}, follow=True)
        assert "your text will be back in the box" in kept.content.decode()
    assert Session.objects.count() == 2

    refused = Client(REMOTE_ADDR=stranger).post("/", {"body": "One too many"}, follow=True)
    assert "too many texts were kept from your network" in refused.content.decode()
    liked = Client(REMOTE_ADDR=stranger).post(f"/c/{comment}/like/", {"action": "like"}, follow=True)
    assert "press the heart again" in liked.content.decode()
    assert Session.objects.count() == 2

    elsewhere = Client(REMOTE_ADDR="198.51.100.20").post(f"/c/{comment}/like/", {"action": "like"}, follow=True)
    assert "it is done as soon as you are in" in elsewhere.content.decode()
    assert Session.objects.count() == 3


def test_a_stale_form_whose_browser_sends_no_origin_but_sec_fetch_site_is_kept(alice):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(alice)
    browser.get("/")

    browser.post("/", {"body": "No Origin sent", "csrfmiddlewaretoken": "x" * 64}, HTTP_SEC_FETCH_SITE="same-origin")

    assert "No Origin sent</textarea>" in browser.get("/").content.decode()


def cross_site_post(browser: Client, path: str, data: dict, *, lax_cookies_sent: bool = False):
    """What a browser does with another site's form: it sends that site's Origin and, being a
    cross-site POST, none of our SameSite=Lax cookies (a sibling subdomain is same-site and
    sends them); it keeps whatever cookies the answer sets."""
    held = SimpleCookie(browser.cookies.output(header="", sep="\n"))
    if not lax_cookies_sent:
        browser.cookies = SimpleCookie()
    answer = browser.post(path, data, HTTP_ORIGIN="https://evil.example", HTTP_SEC_FETCH_SITE="cross-site")
    held.update(browser.cookies)
    browser.cookies = held
    return answer


@pytest.mark.parametrize("lax_cookies_sent", [False, True], ids=["other-site", "sibling-subdomain"])
@pytest.mark.parametrize("where", ["timeline", "reply"])
def test_a_cross_site_form_neither_plants_a_draft_nor_logs_the_victim_out(alice, lax_cookies_sent, where):
    path = "/" if where == "timeline" else f"/c/{comment_create(author_id=str(alice.pk), body='Parent').comment_id}/"
    victim = Client(enforce_csrf_checks=True)
    victim.force_login(alice)
    victim.get(path)
    session_before = victim.cookies[django_settings.SESSION_COOKIE_NAME].value
    sessions_before = Session.objects.count()

    answer = cross_site_post(victim, path, {"body": "Planted words"}, lax_cookies_sent=lax_cookies_sent)

    assert answer.status_code == 403
    assert "Your text is kept" not in answer.content.decode()
    assert django_settings.SESSION_COOKIE_NAME not in answer.cookies
    assert victim.cookies[django_settings.SESSION_COOKIE_NAME].value == session_before
    assert Session.objects.count() == sessions_before
    page = victim.get(path)
    assert page.context["user"] == alice  # still logged in
    assert "Planted words" not in page.content.decode()


def test_a_cross_site_like_keeps_nothing_and_leaves_the_session(alice, make_user):
    comment = comment_create(author_id=str(alice.pk), body="Not liked from afar").comment_id
    victim = Client(enforce_csrf_checks=True)
    victim.force_login(make_user("bob"))
    victim.get("/")
    sessions_before = Session.objects.count()

    answer = cross_site_post(victim, f"/c/{comment}/like/", {"action": "like"})

    assert answer.status_code == 403
    assert Session.objects.count() == sessions_before
    assert victim.get("/").context["user"].username == "bob"


def test_an_anonymous_form_without_its_csrf_token_keeps_nothing(alice):
    stranger = Client(enforce_csrf_checks=True)

    answer = stranger.post("/", {"body": "No token"}, HTTP_ORIGIN="http://testserver")

    assert answer.status_code == 403
    assert Session.objects.count() == 0
    assert django_settings.SESSION_COOKIE_NAME not in answer.cookies


def keep_a_like(client: Client, comment: str) -> None:
    sent = client.post(f"/c/{comment}/like/", {"action": "like", "next": "/"})
    assert sent["Location"] == f"/accounts/login/?next=%2Fc%2F{comment}%2Flike%2F"


def test_a_like_kept_while_logged_out_is_not_done_for_whoever_logs_in_next(client, alice, make_user):
    """Someone presses like on a shared computer and walks away; the next person logs in
    (going elsewhere), and a link to the like's address must not like it as them."""
    carol = make_user("carol")
    comment = comment_create(author_id=str(alice.pk), body="Liked by a passer-by").comment_id
    keep_a_like(client, comment)

    log_in(client, "carol", "/")
    landed = client.get(f"/c/{comment}/like/", follow=True)

    assert "Nothing was changed" in landed.content.decode()
    assert selectors.like_state(comment_id=comment, user_id=str(carol.pk)) == (0, False)


def test_a_like_kept_is_done_only_on_the_redirect_of_its_own_log_in(client, alice, make_user):
    """A log-in that goes elsewhere drops it: a later visit of the like's address (a link
    someone sent) does nothing, even for the person who pressed it."""
    bob = make_user("bob")
    comment = comment_create(author_id=str(alice.pk), body="Liked on the way back only").comment_id
    keep_a_like(client, comment)
    client.get(log_in(client, "bob", "/")["Location"])

    landed = client.get(f"/c/{comment}/like/", follow=True)

    assert "Nothing was changed" in landed.content.decode()
    assert selectors.like_state(comment_id=comment, user_id=str(bob.pk)) == (0, False)


def test_a_kept_like_expires(client, alice, make_user):
    bob = make_user("bob")
    comment = comment_create(author_id=str(alice.pk), body="Liked too late").comment_id
    with clock_override(ManualClock(start=time.time())) as manual:
        keep_a_like(client, comment)
        manual.sleep(LIKE_KEPT_SECONDS + 1)

        back = log_in(client, "bob", f"/c/{comment}/like/")
        landed = client.get(back["Location"], follow=True)

    assert "Nothing was changed" in landed.content.decode()
    assert selectors.like_state(comment_id=comment, user_id=str(bob.pk)) == (0, False)
