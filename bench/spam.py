"""The spam defence measured on the corpus kept in tests/ (tests/social/spam_corpus.json): how many
spam posts any non-staff person could see, and how many ordinary posts were published at once.

    .venv/bin/python bench/spam.py

Every post goes through the site's own posting path (watched words, the default spam check, the
authors' trust levels), on DynamoDB Local, with HOLD_FOR_REVIEW_ENABLED on; then the timeline,
every profile, every feed and each spam comment by id are read as a non-staff person.
"""

from __future__ import annotations

import os
import time

os.environ["HOLD_FOR_REVIEW_ENABLED"] = "True"

from _setup import bench_environment

from tests.social.spam_corpus import corpus_run


def main() -> None:
    with bench_environment():
        start = time.perf_counter()
        figures = corpus_run()
        took = time.perf_counter() - start
    print("Spam defence on the corpus (tests/social/spam_corpus.json)")
    for line in figures.lines():
        print(line)
    print(f"({figures.spam + figures.ordinary} posts screened and read back in {took:.1f} s)")
    ok = figures.spam_seen == 0 and figures.ordinary_published >= 0.95 * figures.ordinary
    print("target (0 spam seen, >= 95% ordinary published at once):", "met" if ok else "NOT met")


if __name__ == "__main__":
    main()
