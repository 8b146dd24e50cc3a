"""Comments' Markdown subset (social/formatting.py, docs/reference/formatting.md): what it renders,
what it leaves as text, @mentions linked outside code and links, the API's `html` beside the
source `body`, the excerpts and mails, and the Preview button without JavaScript."""

from __future__ import annotations

import pytest

from actions.comments import comment_create
from social import selectors
from social.formatting import LINK_REL, markdown_html, markdown_text

pytestmark = pytest.mark.django_db

REL = f'rel="{LINK_REL}"'


@pytest.mark.parametrize(
    ("body", "html"),
    [
        ("**bold** and __bold__", "<p><strong>bold</strong> and <strong>bold</strong></p>"),
        ("*italic* and _italic_", "<p><em>italic</em> and <em>italic</em></p>"),
        ("a `x < y` b", "<p>a <code>x &lt; y</code> b</p>"),
        ("```\n**not bold** <b>\n```", "<pre><code>**not bold** &lt;b&gt;\n</code></pre>"),
        ("    indented *code*", "<pre><code>indented *code*\n</code></pre>"),
        ("> quoted", "<blockquote>\n<p>quoted</p>\n</blockquote>"),
        ("- one\n- two", "<ul>\n<li>one</li>\n<li>two</li>\n</ul>"),
        ("3. three\n4. four", '<ol start="3">\n<li>three</li>\n<li>four</li>\n</ol>'),
        ("[the docs](https://example.com/a)", f'<p><a href="https://example.com/a" {REL}>the docs</a></p>'),
        (
            "see https://example.com/x?a=1&b=2.",
            f'<p>see <a href="https://example.com/x?a=1&amp;b=2" {REL}>https://example.com/x?a=1&amp;b=2</a>.</p>',
        ),
        ("write to ann@example.com", f'<p>write to <a href="mailto:ann@example.com" {REL}>ann@example.com</a></p>'),
        ("line one\nline two", "<p>line one<br>\nline two</p>"),
        ("views.py and example.com stay text", "<p>views.py and example.com stay text</p>"),
        # Not in the subset: shown as typed, never as a tag.
        ("# Not a heading", "<p># Not a heading</p>"),
        ("Title\n===", "<p>Title<br>\n===</p>"),
        ("![a cat](https://example.com/cat.png)", f'<p>!<a href="https://example.com/cat.png" {REL}>a cat</a></p>'),
        ("<b>raw</b> <img src=x>", "<p>&lt;b&gt;raw&lt;/b&gt; &lt;img src=x&gt;</p>"),
        ("~~struck~~ and ---", "<p>~~struck~~ and ---</p>"),
        (
            "[x](javascript:alert(1)) [y](/relative) [z](//host/p)",
            "<p>[x](javascript:alert(1)) [y](/relative) [z](//host/p)</p>",
        ),
        (r"\*not italic\*", "<p>*not italic*</p>"),
        ("", ""),
    ],
)
def test_the_subset_renders_what_it_should_and_nothing_else(body, html):
    assert markdown_html(body) == html


def test_mentions_are_linked_outside_code_and_links():
    usernames = {"bob": "Bob"}
    html = markdown_html("Thanks @bob. `@bob` [@bob](https://example.com) **@bob**\n```\n@bob\n```", usernames)
    mention = f'<a class="mention" href="/u/Bob/" {REL}>@bob</a>'
    assert html.count(mention) == 2  # the sentence's and the bold one; not in code, not inside a link
    assert f"<p>Thanks {mention}. <code>@bob</code>" in html
    assert f"<strong>{mention}</strong>" in html
    assert f'<a href="https://example.com" {REL}>@bob</a>' in html
    assert "<pre><code>@bob\n</code></pre>" in html
    assert markdown_html("Hi @nobody and ann@example.com", usernames).count('class="mention"') == 0


def test_an_excerpt_is_the_rendered_words():
    assert markdown_text("**Late** again?\n\n> `shift` <b>x</b>") == "Late again? shift <b>x</b>"


def test_pages_show_the_rendered_comment(client, alice, bob):
    comment = comment_create(author_id=str(alice.pk), body="**Night** shift, @bob:\n\n- coffee\n- <script>x</script>")
    page = client.get(f"/c/{comment.comment_id}/").content.decode()
    assert "<strong>Night</strong> shift" in page
    assert f'<a class="mention" href="/u/bob/" {REL}>@bob</a>' in page
    assert "<li>&lt;script&gt;x&lt;/script&gt;</li>" in page
    assert "**Night**" not in page  # nor in its title, which reads "Night shift, @bob: …"
    assert "**Night**" not in client.get("/").content.decode()


def test_the_api_answers_the_source_and_its_html(api, alice, bob):
    body = "*Hello* @bob, see https://example.com"
    created = api.as_user(alice).post("/api/comments/", {"body": body}, format="json").json()
    assert created["body"] == body
    assert created["html"] == (
        f'<p><em>Hello</em> <a class="mention" href="/u/bob/" {REL}>@bob</a>, '
        f'see <a href="https://example.com" {REL}>https://example.com</a></p>'
    )
    listed = api.get("/api/comments/").json()["results"]
    assert [(c["body"], c["html"]) for c in listed] == [(body, created["html"])]
    assert api.get(f"/api/comments/{created['id']}/").json()["html"] == created["html"]


def test_preview_without_javascript_renders_and_keeps_the_text(client, alice, bob):
    client.force_login(alice)
    text = "**Bold** for @bob\n\n> <i>quoted</i>"
    answer = client.post("/", {"body": text, "idempotency_key": "a" * 32, "preview": "1"})
    assert answer.status_code == 200
    page = answer.content.decode()
    assert '<div class="body"><p><strong>Bold</strong> for <a class="mention" href="/u/bob/"' in page
    assert "<blockquote>\n<p>&lt;i&gt;quoted&lt;/i&gt;</p>\n</blockquote>" in page
    assert answer.context["form"]["body"].value() == text  # the text stays in the box
    assert "**Bold** for @bob\n\n&gt; &lt;i&gt;quoted&lt;/i&gt;</textarea>" in page
    assert 'value="' + "a" * 32 + '"' in page  # and the form keeps its key for the Post that follows
    assert selectors.comment_timeline(viewer_id=None).results == []  # nothing was posted
    assert client.post("/", {"body": text, "idempotency_key": "a" * 32}).status_code == 302
    assert [c.body for c in selectors.comment_timeline(viewer_id=None).results] == [text]


def test_preview_of_a_reply_and_of_an_edit(client, alice):
    comment = comment_create(author_id=str(alice.pk), body="first")
    client.force_login(alice)
    reply = client.post(f"/c/{comment.comment_id}/", {"body": "*reply*", "preview": "1"})
    assert reply.status_code == 200 and "<p><em>reply</em></p>" in reply.content.decode()
    assert selectors.comment_replies(comment_id=comment.comment_id, viewer_id=None).results == []
    edit = client.post(f"/c/{comment.comment_id}/edit/", {"body": "`edited`", "preview": "1"})
    assert edit.status_code == 200 and "<p><code>edited</code></p>" in edit.content.decode()
    assert selectors.comment_get(comment_id=comment.comment_id, viewer_id=None).body == "first"


def test_a_too_long_preview_shows_it_and_why_it_cannot_be_posted(client, alice):
    client.force_login(alice)
    page = client.post("/", {"body": "x" * 2001, "preview": "1"}).content.decode()
    assert "errorlist" in page and "<p>" + "x" * 2001 + "</p>" in page


def test_the_compose_box_lists_the_subset(client, alice):
    client.force_login(alice)
    page = client.get("/").content.decode()
    assert "Formatting help" in page and "<code>**bold**</code>" in page
    assert 'name="preview"' in page


def test_a_reply_mail_shows_the_reply_rendered_and_its_words(make_user, settings):
    from django.core import mail

    from tests.notifications.mail_helpers import email_on, reply_to, schedule, send_due, verified

    settings.SITE_URL = "https://social.example"
    alice = verified(make_user("alice", display_name="Alice"))
    bob = make_user("bob", display_name="Bob")
    email_on(alice, "reply")
    reply_to(alice, bob, "**Late** again? See [the rota](https://example.org/rota) <script>x</script>")
    schedule(alice)
    assert send_due().get("sent") == 1
    (message,) = mail.outbox
    assert "“Late again? See the rota <script>x</script>”" in message.body  # the words, not the syntax
    (html, _) = message.alternatives[0]
    assert '<strong>Late</strong> again? See <a href="https://example.org/rota" ' + REL + ">the rota</a>" in html
    assert "&lt;script&gt;x&lt;/script&gt;" in html and "<script>" not in html
