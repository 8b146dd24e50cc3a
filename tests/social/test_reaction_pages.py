"""The reaction buttons on pages, without JavaScript: six buttons under each comment, pressed when
yours, forms that redirect back, a reaction kept through a log-in, bad forms refused."""

import re

import pytest

from actions.comments import comment_create
from actions.reactions import reaction_add
from social.reactions.selectors import reaction_state

pytestmark = [pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-Secret-123"


@pytest.fixture
def comment(alice):
    return comment_create(author_id=str(alice.pk), body="React to me").comment_id


def button(page: str, name: str) -> str:
    found = re.search(r'<button type="submit" name="reaction" value="[a-z]+:' + name + r'".*?</button>', page, re.S)
    assert found, f"no {name} button"
    return found.group(0)


def test_six_buttons_pressed_when_yours_and_a_press_comes_back_to_the_page(client, comment, bob, alice):
    reaction_add(comment_id=comment, user_id=str(alice.pk), name="eyes")
    client.force_login(bob)
    page = client.get("/").content.decode()
    assert page.count('name="reaction"') == 6
    heart = button(page, "heart")
    assert 'value="add:heart"' in heart and 'aria-pressed="false"' in heart and "❤️" in heart
    assert '<span class="count">1</span>' in button(page, "eyes")

    sent = client.post(f"/c/{comment}/react/", {"reaction": "add:heart", "next": "/"})
    assert sent.status_code == 302 and sent["Location"] == f"/#c-{comment}"
    page = client.get("/").content.decode()
    heart = button(page, "heart")
    assert 'value="remove:heart"' in heart and 'aria-pressed="true"' in heart and "reacted" in heart
    assert '<span class="count">1</span>' in heart
    # Sent twice (a double click without JavaScript): done once.
    client.post(f"/c/{comment}/react/", {"reaction": "add:heart", "next": "/"})
    assert reaction_state(comment_id=comment, user_id=str(bob.pk)).counts == {"heart": 1, "eyes": 1}

    client.post(f"/c/{comment}/react/", {"reaction": "remove:heart", "next": f"/c/{comment}/"})
    page = client.get(f"/c/{comment}/").content.decode()
    assert 'aria-pressed="false"' in button(page, "heart")
    assert reaction_state(comment_id=comment, user_id=str(bob.pk)).mine == ()


def test_a_visitor_sees_the_counts_without_buttons(client, comment, alice):
    reaction_add(comment_id=comment, user_id=str(alice.pk), name="hooray")
    page = client.get(f"/c/{comment}/").content.decode()
    assert 'name="reaction"' not in page
    assert re.search(r'data-reaction="hooray".*?🎉.*?1</span>', page, re.S)
    assert 'data-reaction="heart"' not in page  # nobody chose it


@pytest.mark.parametrize("value", [None, "add:thumbsup", "heart", "toggle:heart"])
def test_a_form_naming_no_reaction_is_refused_and_changes_nothing(client, comment, bob, value):
    client.force_login(bob)
    answer = client.post(f"/c/{comment}/react/", {"next": "/", **({"reaction": value} if value else {})})
    assert answer.status_code == 400 and "named no reaction" in answer.content.decode()
    assert reaction_state(comment_id=comment, user_id=str(bob.pk)).counts == {}


def test_an_unknown_comment_is_a_404(client, bob):
    client.force_login(bob)
    answer = client.post("/c/5a5b1f3c-0000-4000-8000-000000000000/react/", {"reaction": "add:heart", "next": "/"})
    assert answer.status_code == 404


def test_a_reaction_sent_after_the_session_ended_is_done_after_logging_in(client, comment, bob):
    sent = client.post(f"/c/{comment}/react/", {"reaction": "add:laugh", "next": "/"})
    assert sent.status_code == 302 and sent["Location"] == f"/accounts/login/?next=%2Fc%2F{comment}%2Freact%2F"
    assert "Log in to react" in client.get(sent["Location"]).content.decode()
    back = client.post("/accounts/login/", {"username": "bob", "password": PASSWORD, "next": f"/c/{comment}/react/"})
    assert back["Location"] == f"/c/{comment}/react/"
    landed = client.get(back["Location"], follow=True)
    assert landed.redirect_chain[-1][0] == f"/c/{comment}/#c-{comment}"
    assert "You reacted 😄." in landed.content.decode()
    assert reaction_state(comment_id=comment, user_id=str(bob.pk)).mine == ("laugh",)
    # The like's address does not do a kept reaction, nor the reaction's address a second time.
    assert "Nothing was changed" in client.get(f"/c/{comment}/react/", follow=True).content.decode()
