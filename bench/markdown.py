"""Comments' Markdown (social/formatting.py): render time per comment, and the write units a
comment costs whether its HTML is rendered on read (today) or stored beside its body.

    .venv/bin/python bench/markdown.py [--comments 20000]

The corpus is made here, seeded, as ordinary comments read: lengths mostly a sentence or two
(median about 110 characters, a tail to the 2,000 cap), a quarter of them using the subset
(bold, italic, code, a link, a bare address, an @mention, a list, a quote, a code block), one
in ten with letters beyond ASCII or an emoji. Render time is the full path a page takes
(markdown-it-py, the mention rule, nh3), each body rendered cold (the process keeps renders,
`RENDERED_KEPT`; this measures without them), then bodies built to be slow: 2,000 `*`, 2,000
`[`, 2,000 nested `>`, and others, each at the length cap.

A comment's item is measured as DynamoDB sizes an item (each attribute's name and value in
UTF-8 bytes) from the attributes `comment_create` writes; a write costs 1 unit per KB (2 in a
transaction, as a post is written), and the timeline or replies index (projecting all
attributes) 1 more per KB.
"""

from __future__ import annotations

import argparse
import math
import random
import time
import uuid

from _setup import percentiles

from social.formatting import _rendered, markdown_html
from social.models import Comment

WORDS = [
    "the",
    "a",
    "night",
    "shift",
    "clinic",
    "patient",
    "handover",
    "notes",
    "ward",
    "sepsis",
    "bundle",
    "journal",
    "club",
    "Thursday",
    "conference",
    "session",
    "great",
    "tip",
    "anyone",
    "tried",
    "new",
    "guidelines",
    "busy",
    "outpatient",
    "dosing",
    "paediatric",
    "reference",
    "pocket",
    "tomorrow",
    "before",
    "after",
    "sleep",
    "coffee",
    "team",
    "rota",
    "week",
    "thanks",
    "agree",
    "really",
    "good",
    "question",
    "idea",
    "why",
    "how",
    "we",
    "I",
    "you",
    "it",
    "is",
    "was",
    "will",
    "can",
    "should",
    "not",
    "only",
    "also",
    "just",
    "more",
    "less",
    "early",
    "late",
    "today",
]
NON_ASCII = ["café", "naïve", "über", "señal", "👍", "🎉", "—", "“quoted”", "日本"]
USERNAMES = {"alice": "alice", "bob": "bob", "carol": "carol"}


def sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(4, 16))]
    if rng.random() < 0.1:
        words.insert(rng.randrange(len(words)), rng.choice(NON_ASCII))
    return " ".join(words).capitalize() + rng.choice(".!?.")


def decorate(text: str, rng: random.Random) -> str:
    """One of the subset's forms, as people use them."""
    form = rng.choice(["bold", "italic", "code", "link", "address", "mention", "list", "quote", "block"])
    words = text.split(" ")
    at = rng.randrange(len(words))
    if form == "bold":
        words[at] = f"**{words[at]}**"
    elif form == "italic":
        words[at] = f"*{words[at]}*"
    elif form == "code":
        words[at] = f"`{words[at]}()`"
    elif form == "link":
        words[at] = f"[{words[at]}](https://example.org/guidelines/{rng.randint(1, 999)})"
    elif form == "address":
        words[at] = f"https://example.org/articles/{rng.randint(1000, 99999)}?ref=social"
    elif form == "mention":
        words[at] = f"@{rng.choice(list(USERNAMES))}"
    elif form == "list":
        return text + "\n\n" + "\n".join(f"- {sentence(rng)}" for _ in range(rng.randint(2, 4)))
    elif form == "quote":
        return f"> {sentence(rng)}\n\n{text}"
    else:
        return text + "\n\n```\n" + "\n".join(sentence(rng) for _ in range(rng.randint(1, 3))) + "\n```"
    return " ".join(words)


def ordinary_comment(rng: random.Random) -> str:
    target = min(2000, max(8, int(rng.lognormvariate(math.log(110), 0.9))))
    text = sentence(rng)
    while len(text) < target:
        text += ("\n\n" if rng.random() < 0.15 else " ") + sentence(rng)
    text = text[:target].rstrip()
    if rng.random() < 0.25:
        text = decorate(text, rng)
    return text[:2000]


PATHOLOGICAL = {
    "2,000 *": "*" * 2000,
    "2,000 [": "[" * 2000,
    "2,000 nested >": ">" * 2000,
    "500 [a](": "[a](" * 500,
    "666 *a ": ("*a " * 667)[:2000],
    "1,000 _a": "_a" * 1000,
    "2,000 `": "`" * 2000,
    "2,000 <": "<" * 2000,
    "a list nested 400 deep": "\n".join(" " * (2 * i) + "- x" for i in range(400))[:2000],
    "a 2,000-character link": "https://example.org/" + "a" * 1980,
}


def render_cold(body: str) -> float:
    start = time.perf_counter()
    _rendered.__wrapped__(body, tuple((name, USERNAMES[name]) for name in USERNAMES if f"@{name}" in body))
    return time.perf_counter() - start


def item_bytes(attributes: dict) -> int:
    """DynamoDB's size of an item: every attribute's name and value, in UTF-8 bytes."""
    size = 0
    for name, value in attributes.items():
        size += len(name.encode())
        (kind, data), *_ = value.items()
        if kind == "S":
            size += len(data.encode())
        elif kind == "N":
            size += len(data) // 2 + 1
        else:  # BOOL
            size += 1
    return size


def comment_item(body: str, *, html: str | None) -> dict:
    """The attributes comment_create writes for a top-level comment (and `html` beside them)."""
    comment_id, created_at, author_id = str(uuid.uuid4()), "2026-11-29T01:23:45.678901+00:00", "48213"
    comment = Comment(
        comment_id,
        author_id=author_id,
        body=body,
        created_at=created_at,
        sort_key=f"{created_at}#{comment_id}",
        hidden=False,
        timeline_key="timeline#3",
        profile_author=author_id,
    )
    attributes = comment.serialize()
    if html is not None:
        attributes["html"] = {"S": html}
    return attributes


def write_units(size: int) -> int:
    return max(1, math.ceil(size / 1024))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--comments", type=int, default=20_000)
    args = parser.parse_args()
    rng = random.Random(43)
    corpus = [ordinary_comment(rng) for _ in range(args.comments)]
    markdown_html(corpus[0])  # the parser's first run compiles its patterns
    lengths = sorted(len(body) for body in corpus)
    print(
        f"corpus: {len(corpus):,} comments, length p50 {lengths[len(lengths) // 2]} p99 "
        f"{lengths[int(len(lengths) * 0.99)]} max {lengths[-1]} characters"
    )

    samples = [render_cold(body) for body in corpus]
    stats = percentiles(samples)
    print(
        f"render per comment (cold)          p50 {stats['p50']:.3f} ms  p99 {stats['p99']:.3f} ms  mean {stats['mean']:.3f} ms"
    )
    start = time.perf_counter()
    for body in corpus[:2000]:
        markdown_html(body, USERNAMES)
    for body in corpus[:2000]:
        markdown_html(body, USERNAMES)
    kept = (time.perf_counter() - start) / 4000 * 1000
    print(f"render per comment, a page read again (kept renders, half hits): mean {kept:.3f} ms")
    print("bodies built to be slow (at the 2,000-character cap), cold:")
    for label, body in PATHOLOGICAL.items():
        runs = percentiles([render_cold(body) for _ in range(5)])
        print(f"   {label:<28} p50 {runs['p50']:8.2f} ms")
    half = "*" * 1000
    ratio = percentiles([render_cold(PATHOLOGICAL["2,000 *"]) for _ in range(5)])["p50"] / max(
        1e-9, percentiles([render_cold(half) for _ in range(5)])["p50"]
    )
    print(f"   2,000 * / 1,000 *: {ratio:.2f}x the time for 2x the input (linear: about 2)")

    plain = [item_bytes(comment_item(body, html=None)) for body in corpus]
    stored = [item_bytes(comment_item(body, html=markdown_html(body, USERNAMES))) for body in corpus]
    fits_plain = sum(size <= 1024 for size in plain) / len(corpus)
    fits_stored = sum(size <= 1024 for size in stored) / len(corpus)
    print("comment item (top-level, as comment_create writes it):")
    print(
        f"   render on read (body only):    {fits_plain:6.1%} fit one write unit (1 KB); mean {sum(plain) / len(plain):.0f} B"
    )
    print(
        f"   HTML stored beside the body:   {fits_stored:6.1%} fit one write unit (1 KB); mean {sum(stored) / len(stored):.0f} B"
    )
    for label, sizes in (("render on read", plain), ("HTML stored", stored)):
        units = sum(2 * write_units(size) + write_units(size) for size in sizes) / len(sizes)
        print(f"   {label:<30} {units:.2f} write units a post (item in a transaction x2 + timeline index)")


if __name__ == "__main__":
    main()
