"""The spam corpus (tests/social/spam_corpus.json): no spam post is seen by any non-staff person,
and at least 95% of the ordinary posts are published at once (bench/spam.py prints the figures)."""

import pytest

from tests.social.spam_corpus import corpus_run

pytestmark = pytest.mark.django_db(transaction=True)


def test_no_spam_is_seen_and_ordinary_posts_are_published_at_once(settings):
    settings.HOLD_FOR_REVIEW_ENABLED = True
    figures = corpus_run()
    print("\n".join(figures.lines()))
    assert figures.spam >= 50 and figures.ordinary >= 200
    assert figures.spam_published == 0 and figures.spam_seen == 0
    assert figures.spam_blocked + figures.spam_held == figures.spam
    assert figures.ordinary_published >= 0.95 * figures.ordinary
    assert figures.ordinary_blocked == 0
