"""@mentions: who is notified (case, limits, edits, self, mute, preferences) and how pages show them."""

import pytest

from actions.comments import comment_create, comment_edit
from notifications.feed.selectors import feed_entries_list
from notifications.preferences.services import preferences_update, thread_mute
from social.formatting import markdown_html
from social.mentions import mentioned_people
from social.selectors import comment_find
from tests.trust import established

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("aws_read_lag")]


def uid(user) -> str:
    return str(user.pk)


def post(user, body, parent=None):
    return comment_create(author_id=uid(user), body=body, parent_id=parent.comment_id if parent else None)


def texts(user) -> list[str]:
    return [entry.text for entry in feed_entries_list(user_id=uid(user)).results]


@pytest.fixture
def settled(people):
    """Established accounts (make_user's are new: the lowest trust level's allowances)."""
    for person in people.values():
        established(person)


@pytest.fixture
def people(make_user):
    return {name: make_user(name, display_name=name.capitalize()) for name in ("ann", "bob", "cid", "dee")}


def test_a_mention_in_any_case_notifies_once_never_the_author_and_links_on_the_page(people, settled, client):
    ann, bob, cid = people["ann"], people["bob"], people["cid"]
    comment = post(ann, "Hi @BOB, @Bob and @ann; ask @nobody, or mail cid@example.com.")
    [entry] = feed_entries_list(user_id=uid(bob)).results
    assert (entry.kind, entry.text, entry.url) == ("mention", "Ann mentioned you", f"/c/{comment.comment_id}/")
    assert entry.body.startswith("Hi @BOB")
    assert texts(ann) == [] and texts(cid) == []
    assert comment_find(comment_id=comment.comment_id).mentioned_ids == {uid(bob)}

    page = client.get(f"/c/{comment.comment_id}/").content.decode()
    link = 'class="mention" href="/u/{}/" rel="nofollow ugc noopener">{}</a>'
    assert f"<a {link.format('bob', '@BOB')}, <a {link.format('bob', '@Bob')}" in page
    assert f"<a {link.format('ann', '@ann')}" in page
    assert "@nobody" in page and 'href="/u/nobody/"' not in page
    assert "cid@example.com" in page and 'href="/u/cid/"' not in page


def test_names_are_escaped_and_a_sentence_dot_stays_outside_the_link(people):
    found = {person.username: person for person in mentioned_people("Thanks @bob. <b>@cid</b>")}
    assert set(found) == {"bob", "cid"}
    html = markdown_html("Thanks @bob. <b>@cid</b>\nbye", {"bob": "bob", "cid": "cid"})
    assert html == (
        '<p>Thanks <a class="mention" href="/u/bob/" rel="nofollow ugc noopener">@bob</a>. &lt;b&gt;'
        '<a class="mention" href="/u/cid/" rel="nofollow ugc noopener">@cid</a>&lt;/b&gt;<br>\nbye</p>'
    )


def test_at_most_ten_people_per_comment_and_three_from_a_new_account(make_user, settings):
    author = make_user("author")
    many = [make_user(f"p{n:02d}") for n in range(12)]
    body = " ".join(f"@{person.username}" for person in many)
    post(author, body)  # a new account (minutes old)
    assert [bool(texts(person)) for person in many] == [True] * 3 + [False] * 9

    established(author)
    comment = post(author, body)
    assert [len(texts(person)) for person in many] == [2] * 3 + [1] * 7 + [0] * 2
    # An edit cannot go past the limit either: the comment has used its ten.
    comment_edit(comment_id=comment.comment_id, author_id=uid(author), body=body + " again")
    assert [len(texts(person)) for person in many] == [2] * 3 + [1] * 7 + [0] * 2


def test_an_edit_notifies_only_people_not_mentioned_before(people, settled):
    ann, bob, cid = people["ann"], people["bob"], people["cid"]
    comment = post(ann, "Ping @bob")
    comment_edit(comment_id=comment.comment_id, author_id=uid(ann), body="Ping @bob and @cid")
    comment_edit(comment_id=comment.comment_id, author_id=uid(ann), body="Ping @cid, @BOB")
    assert texts(bob) == ["Ann mentioned you"]
    assert texts(cid) == ["Ann mentioned you"]
    assert comment_find(comment_id=comment.comment_id).mentioned_ids == {uid(bob), uid(cid)}


def test_a_muted_thread_or_mentions_turned_off_notify_nobody(people, settled):
    ann, bob, cid, dee = people["ann"], people["bob"], people["cid"], people["dee"]
    root = post(ann, "A thread")
    thread_mute(user_id=uid(bob), thread_id=root.comment_id)
    preferences_update(user_id=uid(cid), patch={"kinds": {"mention": {"inbox": False}}})
    post(dee, "Look @bob @cid @ann", parent=root)
    assert texts(bob) == [] and texts(cid) == []
    # Ann is the parent's author and mentioned: one entry, the reply (reply > mention).
    assert texts(ann) == ["Dee replied to your comment"]


def test_the_api_answers_the_raw_body(people, settled, api):
    ann = people["ann"]
    comment = post(ann, "Hello @bob <3")
    answer = api.as_user(people["bob"]).get(f"/api/comments/{comment.comment_id}/").json()
    assert answer["body"] == "Hello @bob <3"
