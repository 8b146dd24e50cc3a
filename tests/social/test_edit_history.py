"""Edit history for staff: every edit keeps the body it replaced (once, however edits race), a
report names the version it was made against, readers see only "edited", and the versions go
with the comment's text. Concurrent edits never notify past the comment's mention budget."""

import threading
from datetime import timedelta

import pytest
from django.utils import timezone

import actions.comments
from actions.comments import comment_create, comment_edit
from notifications.feed.selectors import feed_entries_list
from project.errors import Conflict
from social import services
from social.account.services import account_deletions_run
from social.mentions import MENTIONS_PER_COMMENT_MAX
from social.models import Comment, CommentVersion, Report
from social.moderation.services import report_create
from tests.trust import established

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]

PASSWORD = "pw-Secret-123"


def uid(user) -> str:
    return str(user.pk)


def versions(comment_id: str) -> list[tuple[int, str]]:
    return [(int(item.version), item.body) for item in CommentVersion.query(comment_id, consistent_read=True)]


@pytest.fixture(autouse=True)
def no_delay(settings):
    settings.ACCOUNT_DELETION_DELAY_SECONDS = 0


@pytest.fixture
def people(make_user):
    made = {name: make_user(name, display_name=name.capitalize()) for name in ("ann", "bob")}
    for user in made.values():  # settled accounts: the full mention budget, reports count fully
        user.date_joined = timezone.now() - timedelta(days=60)
        user.save(update_fields=["date_joined"])
        established(user)
    made["mod"] = make_user("mod", is_staff=True)
    made["mod"].is_superuser = True
    made["mod"].save(update_fields=["is_superuser"])
    return made


def test_each_edit_keeps_the_earlier_body_and_readers_see_only_the_current(people, api, client):
    ann = people["ann"]
    comment = comment_create(author_id=uid(ann), body="first words")
    comment_edit(comment_id=comment.comment_id, author_id=uid(ann), body="second words")
    comment_edit(comment_id=comment.comment_id, author_id=uid(ann), body="third words")

    assert versions(comment.comment_id) == [(1, "first words"), (2, "second words")]
    item = Comment.get(comment.comment_id, consistent_read=True)
    assert (item.version, item.body) == (3, "third words")
    answer = api.get(f"/api/comments/{comment.comment_id}/").content.decode()
    page = client.get(f"/c/{comment.comment_id}/").content.decode()
    for text in (answer, page):
        assert "third words" in text and "first words" not in text and "second words" not in text
    assert "edited" in page


def test_concurrent_edits_keep_each_version_exactly_once(people, aws_conflicts):
    """Under AWS's conflict rule an edit that keeps losing answers 409 having written nothing;
    every edit that committed kept the body it replaced, once, numbered in order."""
    ann = people["ann"]
    comment = comment_create(author_id=uid(ann), body="as posted")
    bodies = [f"edit number {n}" for n in range(4)]
    start = threading.Barrier(len(bodies), timeout=60)
    errors: list[BaseException] = []
    committed: list[str] = []

    def edit(body: str) -> None:
        try:
            start.wait()
            comment_edit(comment_id=comment.comment_id, author_id=uid(ann), body=body)
            committed.append(body)
        except Conflict:
            pass
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=edit, args=(body,)) for body in bodies]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == []
    kept = versions(comment.comment_id)
    item = Comment.get(comment.comment_id, consistent_read=True)
    assert committed
    assert [number for number, _ in kept] == list(range(1, len(committed) + 1))
    assert item.version == len(committed) + 1 and kept[0][1] == "as posted"
    assert sorted([body for _, body in kept[1:]] + [item.body]) == sorted(committed)  # each edit's body once


def test_concurrent_edits_never_notify_past_the_mention_budget(make_user, people, monkeypatch):
    """Four edits read the comment at once, each naming ten other people: ten are notified in all."""
    ann = people["ann"]
    readers = [make_user(f"reader{n}") for n in range(4 * MENTIONS_PER_COMMENT_MAX)]
    comment = comment_create(author_id=uid(ann), body="no mentions yet")
    edits = 4
    everyone_read = threading.Barrier(edits, timeout=60)
    counted = threading.local()
    real = actions.comments.mentions_to_notify

    def after_every_read(**kwargs):
        chosen = real(**kwargs)
        if not getattr(counted, "once", False):  # each edit's first count waits for the others'
            counted.once = True
            everyone_read.wait()
        return chosen

    monkeypatch.setattr(actions.comments, "mentions_to_notify", after_every_read)
    errors: list[BaseException] = []

    def edit(n: int) -> None:
        names = readers[n * MENTIONS_PER_COMMENT_MAX : (n + 1) * MENTIONS_PER_COMMENT_MAX]
        try:
            body = "Hello " + " ".join(f"@{user.username}" for user in names)
            comment_edit(comment_id=comment.comment_id, author_id=uid(ann), body=body)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=edit, args=(n,)) for n in range(edits)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert errors == []
    item = Comment.get(comment.comment_id, consistent_read=True)
    assert len(item.mentioned_ids) == MENTIONS_PER_COMMENT_MAX
    told = [user for user in readers if feed_entries_list(user_id=uid(user)).results]
    assert {uid(user) for user in told} <= set(item.mentioned_ids)
    assert len(told) <= MENTIONS_PER_COMMENT_MAX


def test_a_report_names_its_version_and_staff_see_what_was_reported(people, client):
    ann, bob = people["ann"], people["bob"]
    comment = comment_create(author_id=uid(ann), body="You are an idiot")
    report_create(comment_id=comment.comment_id, reporter_id=uid(bob), reason="harassment", note="")
    comment_edit(comment_id=comment.comment_id, author_id=uid(ann), body="Have a nice day")

    assert Report.get(comment.comment_id, uid(bob), consistent_read=True).version == 1
    client.force_login(people["mod"])
    case = client.get(f"/admin/dynamo/reports/{comment.comment_id}/").content.decode()
    assert "You are an idiot" in case and "Have a nice day" in case
    assert '<a href="#version-1">1</a>' in case  # the report's row names version 1
    assert "<del>- You are an idiot</del>" in case and "<ins>+ Have a nice day</ins>" in case
    admin = client.get(f"/admin/dynamo/comments/?q={comment.comment_id}").content.decode()
    assert 'id="version-1"' in admin and "You are an idiot" in admin and 'id="version-2"' in admin


def test_the_versions_go_with_the_text(people, api):
    ann = people["ann"]
    deleted = comment_create(author_id=uid(ann), body="deleted later")
    comment_edit(comment_id=deleted.comment_id, author_id=uid(ann), body="deleted later, edited")
    services.comment_delete(comment_id=deleted.comment_id, author_id=uid(ann))
    assert versions(deleted.comment_id) == []

    erased = comment_create(author_id=uid(ann), body="the author leaves")
    comment_edit(comment_id=erased.comment_id, author_id=uid(ann), body="the author leaves, edited")
    assert versions(erased.comment_id) == [(1, "the author leaves")]
    assert api.as_user(ann).delete("/api/me/", {"password": PASSWORD}, format="json").status_code == 202
    assert account_deletions_run() == 1
    assert versions(erased.comment_id) == []


@pytest.mark.parametrize("typed", ["ann", "ANN", "Ann"])
def test_an_erased_name_is_never_given_again_so_old_mentions_name_nobody(people, api, client, typed):
    ann, bob = people["ann"], people["bob"]
    mention = comment_create(author_id=uid(bob), body="Thanks @ann")
    assert api.as_user(ann).delete("/api/me/", {"password": PASSWORD}, format="json").status_code == 202
    assert account_deletions_run() == 1
    api.logout()

    answer = api.post("/api/users/", {"username": typed, "password": "a-long-passw0rd"}, format="json")
    assert answer.status_code == 400
    assert answer.json()["username"] == [services.USERNAME_RESERVED]
    form = {"username": typed, "display_name": "", "password1": "a-long-passw0rd", "password2": "a-long-passw0rd"}
    page = client.post("/accounts/signup/", form)
    assert page.status_code == 200 and "belonged to a deleted account" in page.content.decode()
    shown = client.get(f"/c/{mention.comment_id}/").content.decode()
    assert 'class="mention"' not in shown and "Thanks @ann" in shown
