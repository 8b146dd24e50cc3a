"""Display names as they are stored and as a mail's subject shows them.

A display name is free text its owner types, shown beside their comments, in others'
notifications and in mail subjects. Unicode's format characters (category Cf) draw nothing
themselves but change what is around them: a right-to-left override (U+202E) or an isolate
turns the text after the name backwards ("Bob replied" becoming a different sentence in a
subject), zero-width spaces and joiners make two names that look the same differ. None is
kept: emoji joined by a zero-width joiner show as their parts, side by side. Control
characters (category Cc: tabs, line breaks) become spaces, and every run of spaces one.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

# “Bob”: marks no name can end with by accident (a name may hold ASCII quotes).
OPEN_QUOTE, CLOSE_QUOTE = "\u201c", "\u201d"


def display_name_clean(name: str) -> str:
    """`name` without format characters, its control characters and runs of whitespace one space."""
    kept = []
    for char in name:
        category = unicodedata.category(char)
        if category == "Cf":
            continue
        kept.append(" " if category == "Cc" else char)
    return " ".join("".join(kept).split())


def names_quoted(text: str, names: Sequence[str]) -> str:
    """`text` ("Bob and Alice replied to your comment") with the names it opens with, in
    order, quoted and cleaned: “Bob” and “Alice” replied to your comment. A name the text
    does not open with (it names others, "Bob and 2 others ...") is left as it is."""
    quoted, rest = "", text
    for index, name in enumerate(names):
        lead = "" if index == 0 else " and "
        if not name or not rest.startswith(lead + name):
            break
        quoted += f"{lead}{OPEN_QUOTE}{display_name_clean(name)}{CLOSE_QUOTE}"
        rest = rest[len(lead + name) :]
    return quoted + rest
