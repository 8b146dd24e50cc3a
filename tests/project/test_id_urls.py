"""`id_url` builds the same paths as `{% url %}`, for ids and for usernames of every allowed shape."""

import pytest
from django.template import Context, Template
from django.urls import reverse

from actions.comments import comment_create

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("username", ["person12", "dr.who+1@example_x-y", "Zoe"])
def test_a_profile_link_is_the_one_url_reverses(username):
    rendered = Template('{% load id_urls %}{{ name|id_url:"profile" }}').render(Context({"name": username}))
    assert rendered == reverse("profile", args=[username])


def test_the_timeline_links_each_author_to_their_profile(client, make_user):
    author = make_user("dr.who+1@example_x-y")
    comment_create(author_id=str(author.pk), body="Hello")
    page = client.get("/").content.decode()
    assert f'class="author" href="{reverse("profile", args=[author.username])}"' in page
