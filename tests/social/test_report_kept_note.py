"""A report sent after the session ended: nothing is reported, the person is told, and the note
comes back in the form after the log-in."""

import pytest

from actions.comments import comment_create
from social.models import Report

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_logged_out_reports_note_comes_back_after_the_log_in(client, make_user, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    author, reader = make_user("author"), make_user("reader")
    comment = comment_create(author_id=str(author.pk), body="Something rude")
    path = f"/c/{comment.comment_id}/report/"
    answer = client.post(path, {"reason": "spam", "note": "He keeps posting this link"}, follow=True)
    text = answer.content.decode()
    assert "nothing was reported" in text and "your note will be back" in text
    assert answer.redirect_chain[0][0].startswith("/accounts/login/") or "next=" in answer.redirect_chain[0][0]
    assert not list(Report.query(comment.comment_id))
    client.force_login(reader)
    form = client.get(path).content.decode()
    assert "He keeps posting this link" in form
    assert "He keeps posting this link" not in client.get(path).content.decode()  # shown once
