"""Every page at phone (390x844) and desktop (1280 px) widths: nothing to scroll sideways,
no serious or critical axe-core finding, no console error (CSP, missing files). Each page's
screenshot is kept under var/browser/screenshots/ to look at."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.urls import reverse

from actions.comments import comment_create
from actions.likes import like_add
from delivery import services as delivery_services
from notifications.mail.tokens import address_token
from project.clock import clock
from project.operations.backlog import Backlog
from project.operations.health_services import heartbeat_write
from social.moderation.services import report_create
from social.services import comment_delete
from tests.browser.conftest import ARTIFACTS, DESKTOP, PHONE, axe_violations, horizontal_overflow

LONG_WORD = "Supercalifragilisticexpialidocious" * 3  # user text must wrap, whatever it is


@pytest.fixture
def world(make_user):
    """A small site: comments with long words, replies, likes, a delivery, notifications."""
    alice = make_user("alice", display_name="Alice Wonderland-Liddell")
    bob = make_user("bob", display_name="Bob")
    staff = make_user("boss", display_name="The Boss", is_staff=True)
    staff.is_superuser = True
    staff.save()
    first = comment_create(author_id=str(alice.pk), body=f"A long word: {LONG_WORD} and a link-less URL").comment_id
    comment_create(author_id=str(alice.pk), body="Short and sweet.")
    comment_create(author_id=str(bob.pk), body="A reply with thoughts", parent_id=first)
    like_add(comment_id=first, user_id=str(bob.pk))
    regretted = comment_create(author_id=str(bob.pk), body="Said in haste").comment_id
    comment_create(author_id=str(alice.pk), body="An answer to it", parent_id=regretted)
    comment_delete(comment_id=regretted, author_id=str(bob.pk))
    delivery = delivery_services.delivery_create(
        title="Maintenance tonight",
        body="The site is down from 22:00 to 22:15.",
        url="",
        audience=delivery_services.Audience(kind="usernames", usernames=("alice", "bob")),
        created_by=staff,
    )
    now = clock.now()
    for worker, age, backlog in [
        ("fold_like_events", 2, Backlog(label="pending like events", count=1000, capped=True, oldest_at=now - 75)),
        ("dispatch_deliveries", 600, Backlog(label="unfinished delivery chunks", count=3, oldest_at=now - 900)),
    ]:
        heartbeat_write(
            worker=worker,
            instance="web-1.example.internal:123456",
            started_at=now - 3600,
            now=now - age,
            cycle_at=now - age,
            cycle_seconds=0.25,
            backlog=backlog,
        )
    call_command("dispatch_deliveries", "--no-progress")  # the inbox shows a staff message
    for name in ("carol", "carol-or-not-carol"):  # two accounts waiting on one address
        waiting = make_user(name)
        waiting.email = "carol@example.com"
        waiting.save(update_fields=["email"])
    return {
        "alice": alice,
        "bob": bob,
        "staff": staff,
        "comment": first,
        "deleted": regretted,
        "delivery": delivery.delivery_id,
        "waiting": "carol@example.com",
    }


PAGES = [
    ("timeline", lambda w: "/", "alice"),
    ("timeline-anonymous", lambda w: "/", None),
    ("popular", lambda w: "/popular/", "alice"),
    ("comment", lambda w: f"/c/{w['comment']}/", "alice"),
    ("comment-anonymous", lambda w: f"/c/{w['comment']}/", None),
    ("comment-edit", lambda w: f"/c/{w['comment']}/edit/", "alice"),
    ("comment-delete", lambda w: f"/c/{w['comment']}/delete/", "alice"),
    ("comment-deleted", lambda w: f"/c/{w['deleted']}/", "alice"),
    ("profile", lambda w: "/u/alice/", "alice"),
    ("profile-anonymous", lambda w: "/u/alice/", None),
    ("settings", lambda w: "/me/settings/", "alice"),
    ("two-factor", lambda w: "/me/two-factor/", "alice"),
    ("notification-settings", lambda w: "/me/notifications/", "alice"),
    ("notification-log", lambda w: "/me/notifications/log/", "alice"),
    ("password-change", lambda w: "/accounts/password/change/", "alice"),
    ("password-reset", lambda w: "/accounts/password/reset/", None),
    ("password-reset-sent", lambda w: "/accounts/password/reset/sent/", None),
    ("password-reset-bad-link", lambda w: "/accounts/password/reset/MQ/set-password/", None),
    ("email-address-accounts", lambda w: f"/me/email/accounts/{address_token(w['waiting'])}/", None),
    ("inbox", lambda w: "/notifications/", "alice"),
    ("my-activity", lambda w: "/me/activity/", "alice"),
    ("login", lambda w: "/accounts/login/", None),
    ("signup", lambda w: "/accounts/signup/", None),
    ("not-found", lambda w: "/no/such/page/", None),
    ("deliveries", lambda w: reverse("admin:dynamo-deliveries"), "staff"),
    ("delivery-new", lambda w: reverse("admin:dynamo-delivery-create"), "staff"),
    ("delivery", lambda w: reverse("admin:dynamo-delivery", args=[w["delivery"]]), "staff"),
    ("admin", lambda w: reverse("admin:index"), "staff"),
    ("admin-comments", lambda w: reverse("admin:dynamo-comments"), "staff"),
    ("admin-rankings", lambda w: reverse("admin:dynamo-rankings"), "staff"),
    ("admin-user-notifications", lambda w: reverse("admin:dynamo-user-notifications") + "?username=alice", "staff"),
    ("admin-notification-log", lambda w: reverse("admin:dynamo-notification-log") + "?username=alice", "staff"),
    ("admin-tables", lambda w: reverse("admin:dynamo-tables"), "staff"),
    ("admin-activity", lambda w: reverse("admin:dynamo-activity"), "staff"),
    ("admin-system", lambda w: reverse("admin:dynamo-system"), "staff"),
    ("admin-users", lambda w: reverse("admin:social_user_changelist"), "staff"),
]


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390px", "1280px"])
def test_every_page_fits_the_screen_and_passes_axe(pages, world, viewport):
    folder = ARTIFACTS / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    problems = []
    for name, path, who in PAGES:
        page = pages.open(path(world), user=world[who] if who else None, viewport=viewport)
        page.screenshot(path=str(folder / f"{name}-{viewport['width']}.png"), full_page=True)
        overflow = horizontal_overflow(page)
        if overflow > 0:
            problems.append(f"{name}: {overflow}px wider than the {viewport['width']}px window")
        problems += [f"{name}: {finding}" for finding in axe_violations(page)]
        expected = "status of 404" if name == "not-found" else None  # the page itself answers 404
        page.context.close()
        errors = pages.errors.pop(page)
        problems += [f"{name}: console: {e}" for e in errors if not expected or expected not in e]
        pages.opened.remove(page)
    assert problems == [], "\n".join(problems)


# Pages whose controls sit close together: every target at least 24 x 24 CSS px or clear of
# its neighbours (WCAG 2.5.8, axe's target-size, off by default), and no empty table header.
CLOSE_TARGETS = [
    ("settings", lambda w: "/me/settings/", "alice"),
    ("notification-settings", lambda w: "/me/notifications/", "alice"),
    ("notification-log", lambda w: "/me/notifications/log/", "alice"),
    ("profile-other", lambda w: "/u/bob/", "alice"),
    ("admin-comments", lambda w: reverse("admin:dynamo-comments"), "staff"),
    ("admin-reports", lambda w: reverse("admin:dynamo-reports"), "staff"),
    ("admin-report-case", lambda w: reverse("admin:dynamo-report-case", args=[w["comment"]]), "staff"),
    ("delivery-new", lambda w: reverse("admin:dynamo-delivery-create"), "staff"),
]


@pytest.mark.parametrize("viewport", [PHONE, DESKTOP], ids=["390px", "1280px"])
def test_targets_are_large_enough_to_touch(pages, world, viewport):
    report_create(comment_id=world["comment"], reporter_id=str(world["bob"].pk), reason="spam")
    problems = []
    for name, path, who in CLOSE_TARGETS:
        page = pages.open(path(world), user=world[who] if who else None, viewport=viewport)
        problems += [f"{name}: {finding}" for finding in axe_violations(page, ["target-size", "empty-table-header"])]
        page.context.close()
        pages.errors.pop(page)
        pages.opened.remove(page)
    assert problems == [], "\n".join(problems)
