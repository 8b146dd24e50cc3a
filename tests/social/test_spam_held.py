"""Held for review: a new account's link (or a watched word, or the spam check) stores the comment
for its author and staff only; nothing of it reaches anyone else until staff approve it, and then
it is published with its notifications as if posted then. Reject deletes it."""

from datetime import timedelta

import pytest
from django.utils import timezone

from actions.comments import comment_create
from actions.held import held_approve, held_reject
from notifications.feed.selectors import feed_entries_list
from social.models import HeldComment, ModerationAction
from social.selectors import comment_find
from tests.trust import established

pytestmark = pytest.mark.django_db(transaction=True)

SPAM = "Great deals at https://spam.example/buy, ask @bob"


def uid(user) -> str:
    return str(user.pk)


def aged(user, days=60):
    """An established account, `days` old (age alone earns no trust level)."""
    user.date_joined = timezone.now() - timedelta(days=days)
    user.save(update_fields=["date_joined"])
    return established(user)


@pytest.fixture
def people(make_user, settings):
    settings.HOLD_FOR_REVIEW_ENABLED = True
    made = {
        "new": make_user("newbie"),
        "bob": aged(make_user("bob")),
        "old": aged(make_user("old")),
        "mod": make_user("mod", is_staff=True),
    }
    made["mod"].is_superuser = True
    made["mod"].save(update_fields=["is_superuser"])
    return made


def texts(user) -> list[str]:
    return [entry.text for entry in feed_entries_list(user_id=uid(user)).results]


def everything_others_see(client, api, people, comment_id: str) -> str:
    """What every surface shows to someone other than the author: pages and API lists, as
    another person and anonymously, joined into one text to search."""
    seen = []
    for viewer in (None, people["bob"]):
        if viewer is None:
            client.logout()
            api.credentials()
        else:
            client.force_login(viewer)
            api.as_user(viewer)
        for url in ("/", "/popular/", f"/u/{people['new'].username}/", f"/c/{comment_id}/"):
            response = client.get(url)
            seen.append(response.content.decode() if response.status_code == 200 else "")
        for url in (
            "/api/comments/",
            "/api/comments/popular/",
            f"/api/users/{people['new'].username}/comments/",
            f"/api/comments/{comment_id}/",
        ):
            response = api.get(url)
            seen.append(response.content.decode() if response.status_code == 200 else "")
    return "\n".join(seen)


def test_a_new_accounts_link_is_held_seen_by_its_author_only_and_notifies_nobody(people, client, api):
    comment = comment_create(author_id=uid(people["new"]), body=SPAM)
    stored = comment_find(comment_id=comment.comment_id)
    assert stored.hidden and stored.hidden_by == "held"
    assert stored.timeline_key is None and stored.profile_author is None and not stored.mentioned_ids
    assert HeldComment.objects.get(comment_id=comment.comment_id).rule == "new_account_link"
    assert texts(people["bob"]) == []  # mentioned, told nothing
    assert "spam.example" not in everything_others_see(client, api, people, comment.comment_id)

    client.force_login(people["new"])
    page = client.get(f"/c/{comment.comment_id}/").content.decode()
    assert "waiting for review" in page and "spam.example" in page
    assert "Waiting for review" in client.get("/u/newbie/").content.decode()
    own = api.as_user(people["new"]).get(f"/api/comments/{comment.comment_id}/")
    assert own.status_code == 200 and own.json()["held"] is True
    assert api.as_user(people["bob"]).get(f"/api/comments/{comment.comment_id}/").status_code == 404

    # Nobody can like, react to, reply to or report it.
    bob_api = api.as_user(people["bob"])
    assert bob_api.put(f"/api/comments/{comment.comment_id}/like/").status_code == 404
    reply = bob_api.post("/api/comments/", {"body": "hi", "parent_id": comment.comment_id}, format="json")
    assert reply.status_code == 400
    report = bob_api.post(f"/api/comments/{comment.comment_id}/report/", {"reason": "spam"}, format="json")
    assert report.status_code == 404
    line = ModerationAction.objects.get(target_id=comment.comment_id, action="hold")
    assert line.source == "screen" and "new_account_link" in line.detail


def test_a_held_reply_tells_the_parents_author_nothing_until_approved(people, client, api):
    parent = comment_create(author_id=uid(people["old"]), body="What do you think?")
    reply = comment_create(author_id=uid(people["new"]), body=SPAM, parent_id=parent.comment_id)
    assert texts(people["old"]) == [] and texts(people["bob"]) == []
    client.force_login(people["bob"])
    assert "spam.example" not in client.get(f"/c/{parent.comment_id}/").content.decode()
    assert api.as_user(people["bob"]).get(f"/api/comments/{parent.comment_id}/replies/").json()["results"] == []

    assert held_approve(comment_id=reply.comment_id, staff=people["mod"]) is True
    assert texts(people["old"]) == ["Newbie replied to your comment"]
    assert texts(people["bob"]) == ["Newbie mentioned you"]
    shown = comment_find(comment_id=reply.comment_id)
    assert not shown.hidden and shown.reply_to == parent.comment_id and shown.mentioned_ids == {uid(people["bob"])}
    assert [c["id"] for c in api.get(f"/api/comments/{parent.comment_id}/replies/").json()["results"]] == [
        reply.comment_id
    ]
    assert not HeldComment.objects.exists()
    # Twice: nothing more happens, nobody is told again.
    assert held_approve(comment_id=reply.comment_id, staff=people["mod"]) is False
    assert texts(people["old"]) == ["Newbie replied to your comment"]


def test_approval_publishes_on_the_timeline_as_if_posted_then(people, api):
    earlier = comment_create(author_id=uid(people["new"]), body=SPAM)
    later = comment_create(author_id=uid(people["old"]), body="An ordinary comment")
    held_approve(comment_id=earlier.comment_id, staff=people["mod"])
    listed = [c["id"] for c in api.get("/api/comments/").json()["results"]]
    assert listed == [earlier.comment_id, later.comment_id]  # newest: approved after the other was posted
    assert comment_find(comment_id=earlier.comment_id).profile_author == uid(people["new"])


def test_rejection_deletes_it_and_a_rejected_one_cannot_be_approved(people):
    comment = comment_create(author_id=uid(people["new"]), body=SPAM)
    assert held_reject(comment_id=comment.comment_id, staff=people["mod"]) is True
    assert comment_find(comment_id=comment.comment_id) is None
    assert not HeldComment.objects.exists()
    assert texts(people["bob"]) == []
    with pytest.raises(Exception, match="No such comment"):
        held_approve(comment_id=comment.comment_id, staff=people["mod"])
    actions = list(ModerationAction.objects.filter(target_id=comment.comment_id).values_list("action", "outcome"))
    assert ("reject", "done") in actions


def test_the_held_api_lists_and_decides_several_at_once_staff_only(people, api):
    first = comment_create(author_id=uid(people["new"]), body=SPAM)
    second = comment_create(author_id=uid(people["new"]), body="see https://spam.example/two for more")
    assert api.as_user(people["bob"]).get("/api/moderation/held/").status_code == 403
    staff = api.as_user(people["mod"])
    listed = staff.get("/api/moderation/held/").json()
    assert listed["count"] == 2
    assert [row["id"] for row in listed["results"]] == [first.comment_id, second.comment_id]
    assert listed["results"][0]["rule"] == "new_account_link" and "spam.example" in listed["results"][0]["body"]

    bad = staff.post("/api/moderation/held/decide/", {"comment_ids": ["x"], "decision": "approve"}, format="json")
    assert bad.status_code == 400 and "comment_ids" in str(bad.json())
    body = {"comment_ids": [first.comment_id, second.comment_id], "decision": "approve"}
    answer = staff.post("/api/moderation/held/decide/", body, format="json").json()
    assert [row["done"] for row in answer["results"]] == [True, True]
    again = staff.post("/api/moderation/held/decide/", body, format="json").json()
    assert [row["done"] for row in again["results"]] == [False, False]
    assert staff.get("/api/moderation/held/").json() == {"count": 0, "results": []}
    assert texts(people["bob"]) == ["Newbie mentioned you"]


def test_holding_is_not_a_rate_limit_and_has_its_own_switch(people, settings):
    settings.RATE_LIMITS_ENABLED = False
    held = comment_create(author_id=uid(people["new"]), body=SPAM)
    assert comment_find(comment_id=held.comment_id).hidden
    settings.HOLD_FOR_REVIEW_ENABLED = False
    shown = comment_create(author_id=uid(people["new"]), body=SPAM + " again")
    assert not comment_find(comment_id=shown.comment_id).hidden
    assert texts(people["bob"]) == ["Newbie mentioned you"]


def test_an_established_account_and_staff_post_links_at_once(people):
    for author in (people["old"], people["mod"]):
        comment = comment_create(author_id=uid(author), body="Docs at https://example.org/guide are good")
        assert not comment_find(comment_id=comment.comment_id).hidden


def test_posting_a_held_comment_on_the_page_says_it_waits_for_review(people, client):
    client.force_login(people["new"])
    response = client.post("/", {"body": SPAM}, follow=True)
    page = response.content.decode()
    assert "waiting for review" in page and "spam.example" in page
    [row] = HeldComment.objects.all()
    assert response.redirect_chain[-1][0] == f"/c/{row.comment_id}/"


def test_staff_cannot_show_a_held_comment_without_approving_it(people):
    from social.moderation import staff_services

    comment = comment_create(author_id=uid(people["new"]), body=SPAM)
    with pytest.raises(Exception, match="waiting for review"):
        staff_services.comment_unhide_by_staff(comment_id=comment.comment_id, staff=people["mod"])
    assert comment_find(comment_id=comment.comment_id).hidden_by == "held"


def test_the_admin_queue_approves_and_rejects_with_one_click(people, client):
    keep = comment_create(author_id=uid(people["new"]), body=SPAM)
    drop = comment_create(author_id=uid(people["new"]), body="cheap https://spam.example/x now")
    client.force_login(people["mod"])
    page = client.get("/admin/social/heldcomment/").content.decode()
    assert "spam.example/buy" in page and f'data-approve="{keep.comment_id}"' in page
    client.post(f"/admin/social/heldcomment/{keep.comment_id}/approve/")
    client.post(f"/admin/social/heldcomment/{drop.comment_id}/reject/")
    assert not comment_find(comment_id=keep.comment_id).hidden
    assert comment_find(comment_id=drop.comment_id) is None


def test_an_approval_whose_process_dies_after_the_commit_still_notifies(people, monkeypatch):
    """The approval's fan-out is an outbox item of its own transaction: the drainer delivers it."""
    from notifications.feed.services import feed_retries_process
    from project.clock import clock

    parent = comment_create(author_id=uid(people["old"]), body="What do you think?")
    reply = comment_create(author_id=uid(people["new"]), body=SPAM, parent_id=parent.comment_id)
    monkeypatch.setattr("actions.held.fanout_after_response", lambda fanout: None)  # dies before sending
    assert held_approve(comment_id=reply.comment_id, staff=people["mod"])
    assert texts(people["old"]) == [] and texts(people["bob"]) == []
    feed_retries_process(now_ms=clock.now_ms() + 3_600_000)  # `process_feed_retries`, later
    assert texts(people["old"]) == ["Newbie replied to your comment"]
    assert texts(people["bob"]) == ["Newbie mentioned you"]


def test_an_author_deletes_their_held_comment_from_its_page_and_it_leaves_the_queue(people, client, api):
    comment = comment_create(author_id=uid(people["new"]), body=SPAM)
    other = comment_create(author_id=uid(people["new"]), body="and https://spam.example/two too")
    assert HeldComment.objects.count() == 2
    # Nobody else may: someone else's held comment does not exist for them.
    client.force_login(people["bob"])
    assert client.get(f"/c/{comment.comment_id}/delete/").status_code == 404
    assert api.as_user(people["bob"]).delete(f"/api/comments/{comment.comment_id}/").status_code == 404

    client.force_login(people["new"])
    page = client.get(f"/c/{comment.comment_id}/").content.decode()
    assert f'href="/c/{comment.comment_id}/delete/" data-held-delete' in page
    confirm = client.get(f"/c/{comment.comment_id}/delete/")
    assert confirm.status_code == 200 and "nobody else has seen it" in confirm.content.decode()
    assert client.post(f"/c/{comment.comment_id}/delete/").status_code == 302
    assert comment_find(comment_id=comment.comment_id) is None
    assert list(HeldComment.objects.values_list("comment_id", flat=True)) == [other.comment_id]
    assert client.get(f"/c/{comment.comment_id}/").status_code == 404

    # The API's delete does the same; twice, the second finds nothing.
    own = api.as_user(people["new"])
    assert own.delete(f"/api/comments/{other.comment_id}/").status_code == 204
    assert comment_find(comment_id=other.comment_id) is None and not HeldComment.objects.exists()
    assert own.delete(f"/api/comments/{other.comment_id}/").status_code == 404
    assert api.as_user(people["mod"]).get("/api/moderation/held/").json()["results"] == []
