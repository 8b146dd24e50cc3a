"""Watched words: matching a body against them whatever its letter case, Unicode form, spacing
and look-alike letters, and masking the ones to censor.

A body and each watched word are folded the same way, word by word (`fold`): NFKC (full-width
and compatibility forms become plain ones: full-width `viagra` is `viagra`), case folding, accents
dropped, letters of other scripts that look like Latin ones mapped to them (Cyrillic a, Greek
omicron), and digits standing for letters inside a word (`v1agra`). Invisible format characters
(zero-width spaces, joiners) are taken out of the body first. A run of single characters
separated by spaces or punctuation (`v i a g r a`, `v.i.a.g.r.a`) is read as one word. A watched
phrase matches its words in sequence. Matching is by whole words, so a short word never matches
inside a longer one (`ass` is not in `class`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# Letters of other scripts drawn like Latin ones (Unicode's confusables, the common ones).
# Written as escapes: the letters themselves look like the Latin ones they stand for.
LOOK_ALIKES = str.maketrans(
    {
        "\u0430": "a", "\u0432": "b", "\u0435": "e", "\u0451": "e", "\u043a": "k", "\u043c": "m",
        "\u043d": "h", "\u043e": "o", "\u0440": "p", "\u0441": "c", "\u0442": "t", "\u0443": "y",
        "\u0445": "x", "\u0455": "s", "\u0456": "i", "\u0457": "i", "\u0458": "j", "\u0501": "d",
        "\u051b": "q", "\u051d": "w", "\u0261": "g", "\u04af": "y", "\u04bb": "h", "\u04cf": "l",
        "\u03b1": "a", "\u03b2": "b", "\u03b5": "e", "\u03b7": "n", "\u03b9": "i", "\u03ba": "k",
        "\u03bd": "v", "\u03bf": "o", "\u03c1": "p", "\u03c4": "t", "\u03c5": "u", "\u03c7": "x",
        "\u03c9": "w", "\u03c2": "s", "\u03c3": "o", "\u0131": "i", "\u0142": "l", "\u00f8": "o",
        "\u00df": "ss", "\u017f": "s",
    }
)  # fmt: skip
# Digits written for letters, only inside a word that has letters too (`v1agra`, never `2026`).
DIGIT_LETTERS = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "8": "b"})
WORD = re.compile(r"\w+")
# Between two single characters of a spaced-out word: spaces or punctuation, no line break.
SPACED_GAP = re.compile(r"[^\w\n]{1,3}\Z")


def strip_invisible(text: str) -> str:
    """The text without format characters (category Cf: zero-width space, joiners, bidi marks)."""
    return "".join(char for char in text if unicodedata.category(char) != "Cf")


def fold(word: str) -> str:
    """One word as it is compared: NFKC, case folded, accents dropped, look-alikes and digits mapped."""
    text = unicodedata.normalize("NFKC", word).casefold()
    text = "".join(char for char in unicodedata.normalize("NFKD", text) if not unicodedata.combining(char))
    text = text.translate(LOOK_ALIKES)
    if any(char.isalpha() for char in text):
        text = text.translate(DIGIT_LETTERS)
    return text


def word_key(phrase: str) -> str:
    """A watched word's (or phrase's) folded form, its words joined by one space: what it is stored and matched as."""
    return " ".join(token.text for token in tokens_of(strip_invisible(phrase)))


@dataclass(frozen=True)
class Token:
    text: str  # folded
    start: int
    end: int
    # A word spelled out one character at a time: each character's span (its folded form one letter)
    letters: tuple[tuple[int, int], ...] = ()


def tokens_of(text: str) -> list[Token]:
    """The folded words of `text` with their spans; runs of single characters joined into one word."""
    found = [(match.group(), match.start(), match.end()) for match in WORD.finditer(text)]
    tokens: list[Token] = []
    run: list[tuple[str, int, int]] = []

    def close_run() -> None:
        if len(run) >= 3:
            folded = [fold(part) for part, _s, _e in run]
            letters = tuple((start, end) for _p, start, end in run) if all(len(f) == 1 for f in folded) else ()
            tokens.append(Token("".join(folded), run[0][1], run[-1][2], letters))
        else:
            tokens.extend(Token(fold(part), start, end) for part, start, end in run)
        run.clear()

    for raw, start, end in found:
        if len(raw) == 1 and (not run or SPACED_GAP.match(text[run[-1][2] : start])):
            run.append((raw, start, end))
            continue
        close_run()
        if len(raw) == 1:
            run.append((raw, start, end))
            continue
        tokens.append(Token(fold(raw), start, end))
    close_run()
    return [token for token in tokens if token.text]


@dataclass(frozen=True)
class WordHit:
    word: str  # as staff typed it
    action: str
    start: int  # its span in the body (without invisible characters)
    end: int


def words_find(body: str, words: Iterable[tuple[str, str, str]]) -> list[WordHit]:
    """Every occurrence in `body` (invisible characters already taken out) of the watched
    `words`, each `(word, key, action)`: whole words, in sequence for a phrase."""
    tokens = tokens_of(body)
    folded = [token.text for token in tokens]
    hits: list[WordHit] = []
    for word, key, action in words:
        wanted = key.split(" ")
        if not wanted or not wanted[0]:
            continue
        size = len(wanted)
        for index in range(len(folded) - size + 1):
            if folded[index : index + size] == wanted:
                hits.append(WordHit(word, action, tokens[index].start, tokens[index + size - 1].end))
        if size == 1:  # a word spelled out among other single letters ("is this a p y r a m i d")
            for token in tokens:
                at = token.text.find(key) if token.letters and token.text != key else -1
                if at >= 0:
                    hits.append(WordHit(word, action, token.letters[at][0], token.letters[at + len(key) - 1][1]))
    return hits


def censored(body: str, hits: Sequence[WordHit]) -> str:
    """`body` with the letters of each hit replaced by asterisks (spaces and punctuation kept)."""
    chars = list(body)
    for hit in hits:
        for index in range(hit.start, hit.end):
            if chars[index].isalnum():
                chars[index] = "*"
    return "".join(chars)
