"""A deleted account's reactions: undone by the eraser (counts exact, run twice harmless), and in the export."""

from __future__ import annotations

import pytest

from actions.comments import comment_create
from actions.reactions import reaction_add
from project.identity.erasure import erasure_steps, export_sections
from social.models import Reaction
from social.reactions.selectors import reaction_state

pytestmark = [pytest.mark.django_db(transaction=True)]

NAMES = ("heart", "eyes", "hooray")


@pytest.fixture
def carol(make_user):
    return make_user("carol", display_name="Carol")


def test_the_eraser_undoes_every_reaction_once_across_pages(alice, bob, carol):
    # 10 comments x 3 reactions: more than one page of the step, a page ending inside a comment.
    comments = [comment_create(author_id=str(bob.pk), body=f"Bob {n}").comment_id for n in range(10)]
    for comment_id in comments:
        for name in NAMES:
            reaction_add(comment_id=comment_id, user_id=str(alice.pk), name=name)
        reaction_add(comment_id=comment_id, user_id=str(carol.pk), name="heart")
    export = next(section for section in export_sections() if section.name == "reactions")
    exported = list(export.read(user_id=str(alice.pk)))
    assert sorted((item["comment_id"], item["reaction"]) for item in exported) == sorted(
        (comment_id, name) for comment_id in comments for name in NAMES
    )
    step = next(step for step in erasure_steps() if step.name == "reactions")
    cursor = None
    while True:
        following = step.run(user_id=str(alice.pk), cursor=cursor)
        step.run(user_id=str(alice.pk), cursor=cursor)  # the same unit again: a crash before its progress
        if following is None:
            break
        cursor = following
    for comment_id in comments:
        state = reaction_state(comment_id=comment_id, user_id=str(carol.pk))
        assert state.counts == {"heart": 1} and state.mine == ("heart",)
    assert list(Reaction.by_user.query(str(alice.pk))) == []
    assert len([row for comment_id in comments for row in Reaction.query(comment_id, consistent_read=True)]) == 10
