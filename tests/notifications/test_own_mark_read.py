"""A person who marks notifications read sees the badge at what they left it, on AWS too:
under the read lag model (eventually consistent reads trail each write by up to 2 s) the next
page's header and the live poll show the badge the mark-read answered, at once.

Other people's likes reach the badge a moment later: the test waits for those, never for
the person's own change.
"""

import pytest

from actions.comments import comment_create
from notifications import selectors
from project.testing.aws_read_lag import aws_read_lag_model
from project.testing.harness import wait_for
from tests.notifications.helpers import fold, like, uid

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fold_by_the_worker", "aws_read_lag"),
]


@pytest.fixture
def aws_read_lag():
    """Every write lags 1 to 2 s here (the suite's default floor is 0.1 s): a page that missed the
    person's own write cannot pass by a lag that ran out before it was read."""
    with aws_read_lag_model(min_lag=1.0) as stats:
        yield stats


def badge_of(html: str) -> str:
    start = html.index("data-unread-badge")
    return html[start : html.index("</span>", start)]


def test_marking_read_clears_the_badge_on_the_next_page_and_the_live_poll(client, people):
    author = people["author"]
    comment = comment_create(author_id=uid(author), body="Liked twice").comment_id
    like(people["alice"], comment)
    like(people["bob"], comment)
    client.force_login(author)
    # Other people's likes: the header's badge shows them within about a second, as one notification.
    wait_for(lambda: selectors.unread_count_sources(user_id=uid(author)) == {f"like#{comment}": 2}, what="both likes")
    wait_for(lambda: ">1<" in badge_of(client.get("/").content.decode()), what="the badge showing 1")
    assert client.post("/api/notifications/read/", {"comment_ids": [comment]}, content_type="application/json").json()
    assert ">0<" in badge_of(client.get("/").content.decode())
    assert client.get("/api/live/").json()["unread_count"] == 0
    like(people["carol"], comment)
    wait_for(lambda: client.get("/api/live/").json()["unread_count"] == 1, what="the badge showing Carol's like")
    assert client.post("/notifications/read-all/").status_code == 302
    assert ">0<" in badge_of(client.get("/").content.decode())
    assert client.get("/api/live/").json()["unread_count"] == 0
    assert selectors.unread_count(user_id=uid(author)) == 0
    assert fold() == 0
