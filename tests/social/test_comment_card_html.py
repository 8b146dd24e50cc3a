"""A comment's card, as each list draws it, pinned to the byte (tests/social/comment_cards.html).

Cards are most of a list page's rendering; whatever draws them, each case keeps its markup:
the links, the like form and its accessible text, the ids the scripts find (`c-<id>`,
`data-comment-id`, `data-like-count`). The cases: one's own comment (edited or not) and
another's, liked and not, deleted, on a page with and without its reply link, on the report
page (no report link), logged out.

`comment_cards.html` holds, for each page (`<!-- viewer: path -->`), the cards it shows, in
order: `{liked}` and the like are the comments' ids, `{csrf}` the page's CSRF token,
`{iso_liked}` / `{title_liked}` when a comment was posted (`{..._edited}`: the edit).
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command

from actions.comments import comment_create
from actions.comments import comment_edit as comment_body_edit
from actions.likes import like_add
from project.clock import ManualClock, clock_override
from social import services

pytestmark = pytest.mark.django_db

PINNED = Path(__file__).with_name("comment_cards.html")
SECTION = re.compile(r"^<!-- (bob|logged out): (\S+) -->\n", re.MULTILINE)
ARTICLE = re.compile(r'<article class="comment.*?</article>', re.DOTALL)
CSRF = re.compile(r'name="csrfmiddlewaretoken" value="([^"]+)"')

# Seconds after the first post at which each comment was posted (`edited`: the edit), each in
# a minute of its own (a card's title shows the minute). The first post is 3.5 hours old, the
# edit 2.5, so the pages say "3 hours ago" and "2 hours ago" however long the test takes.
POSTED = {"deleted": 0, "plain": 60, "own": 120, "liked": 180, "reply_bob": 240, "reply_alice": 300, "edited": 3600}


@dataclass
class Thread:
    bob: object
    ids: dict[str, str]  # name in POSTED -> comment id
    times: dict[str, str]  # iso_<name> / title_<name> -> as the page shows it


def _at(start: float, name: str):
    return clock_override(ManualClock(start + POSTED[name]))


@pytest.fixture
def thread(make_user) -> Thread:
    """Alice's comments `plain` (liked by herself), `liked` (liked by both, mentioning Bob) and
    `deleted` (with her reply `reply_alice` under it); Bob's `own` (edited) and his reply
    `reply_bob` to `liked`."""
    alice = make_user("alice", display_name="Alice <A&B>")
    bob = make_user("bob", display_name="Bob")
    alice_id, bob_id = str(alice.pk), str(bob.pk)
    start = float(int(time.time()) - 3 * 3600 - 1800)
    ids: dict[str, str] = {}
    with _at(start, "deleted"):
        ids["deleted"] = comment_create(author_id=alice_id, body="Soon gone").comment_id
    with _at(start, "plain"):
        ids["plain"] = comment_create(author_id=alice_id, body="Plain <b>words</b> & more").comment_id
    with _at(start, "own"):
        ids["own"] = comment_create(author_id=bob_id, body="Bob's own\nsecond line").comment_id
    with _at(start, "liked"):
        ids["liked"] = comment_create(author_id=alice_id, body="Hello @bob, and @nobody.").comment_id
    with _at(start, "reply_bob"):
        ids["reply_bob"] = comment_create(author_id=bob_id, body="A reply", parent_id=ids["liked"]).comment_id
    with _at(start, "reply_alice"):
        ids["reply_alice"] = comment_create(author_id=alice_id, body="Under it", parent_id=ids["deleted"]).comment_id
    with _at(start, "reply_alice"):  # the likes, after the replies
        like_add(comment_id=ids["liked"], user_id=bob_id)
        like_add(comment_id=ids["liked"], user_id=alice_id)  # first on the popular page (a tie: by id)
        like_add(comment_id=ids["plain"], user_id=alice_id)
    with _at(start, "edited"):
        comment_body_edit(comment_id=ids["own"], author_id=bob_id, body="Bob's own, edited")
        services.comment_delete(comment_id=ids["deleted"], author_id=alice_id)
    call_command("aggregate_counters", verbosity=0)  # the popular page's ranking
    times = {}
    for name, offset in POSTED.items():
        at = datetime.fromtimestamp(start + offset, UTC)
        times[f"iso_{name}"] = f"{at:%Y-%m-%dT%H:%M:%S}+00:00"
        times[f"title_{name}"] = f"{at:%Y-%m-%d %H:%M} UTC"
    return Thread(bob, ids, times)


def _pinned_pages() -> list[tuple[str, str, str]]:
    """(viewer, path, the cards' HTML) for each page in comment_cards.html."""
    parts = SECTION.split(PINNED.read_text())
    return [(parts[at], parts[at + 1], parts[at + 2]) for at in range(1, len(parts), 3)]


def test_every_case_is_pinned():
    pinned = "".join(cards for _, _, cards in _pinned_pages())
    for case in (
        'class="comment deleted-comment"',  # deleted
        '<footer><a href="/c/{deleted}/">Replies</a></footer>',  # deleted, reply link on
        '<p class="body muted">This comment was deleted by its author.</p>\n  \n</article>',  # ... off
        '<span class="muted edited">',  # edited
        'aria-pressed="true"',  # liked
        'aria-pressed="false"',  # not liked
        '<span class="like-static">',  # logged out
        'class="reply-link"',  # reply link on
        'class="report-link"',  # another's comment
        "Edit<span",  # one's own
    ):
        assert case in pinned, case


@pytest.mark.parametrize(("viewer", "path", "pinned"), _pinned_pages(), ids=lambda value: value[:40])
def test_a_page_draws_its_cards_as_pinned(client, thread, viewer, path, pinned):
    if viewer == "bob":
        client.force_login(thread.bob)
    page = client.get(path.format(**thread.ids))
    assert page.status_code == 200
    html = page.content.decode()
    tokens = set(CSRF.findall(html))
    assert len(tokens) <= 1  # one token per page (the comment forms and the cards share it)
    if viewer == "logged out":  # no form that needs one: no token, no CSRF cookie set
        assert not tokens and settings.CSRF_COOKIE_NAME not in page.cookies
    expected = pinned.format(**thread.ids, **thread.times, csrf=next(iter(tokens), ""))
    assert "\n".join(ARTICLE.findall(html)) + "\n" == expected
