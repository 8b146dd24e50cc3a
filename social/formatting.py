"""A comment's body as HTML: the Markdown subset people may write (docs/reference/formatting.md).

**Bold**, *italic*, `inline code`, code blocks (fenced or indented), > quotes, lists, [links](https://…)
and bare http(s) addresses and e-mail addresses made links; a line break is a line break, as it
was when comments were plain text. Nothing else: a heading, an image, a table or raw HTML stays
the text it was typed as (escaped), never a tag.

Two well-kept libraries do the work, each bounded by the body's length cap (BODY_MAX_LENGTH):
markdown-it-py, a CommonMark parser whose rules run in time linear in the input (bench/markdown.py:
twice the input, twice the time, for bodies built to be slow too), with only the subset's rules
on; then nh3 (the Rust sanitiser ammonia), which keeps only the tags and
attributes the subset makes, links only to http, https and mailto (and the site's own profile
paths, made by this module for @mentions), and gives every link `rel="nofollow ugc noopener"`.
The parser alone never emits raw HTML or another scheme; the sanitiser holds the line if it ever
did.

@mentions are linked as they were in plain text (social.mentions): a core rule walks the parsed
text and links each mention of a known person, never inside `code`, a code block or a link's
own text.

The body is stored as typed; the HTML is made when it is shown (render on read): an ordinary
comment renders in about 0.1 ms (p99 0.5 ms), while storing the HTML beside the body would take
a comment's item past one write unit (1 KB) for 9.5% of ordinary comments instead of 1.6%, on
every post and edit and in the index that projects the whole item (bench/markdown.py).
"""

from __future__ import annotations

import functools
import html
import re
from collections.abc import Mapping
from typing import Any

import nh3
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token

from social.mentions import MENTION_PATTERN, mention_name, mention_names

LINK_REL = "nofollow ugc noopener"
LINK_SCHEMES = ("http:", "https:", "mailto:")
MENTION_HREF = re.compile(r"/u/[A-Za-z0-9@.+_%-]+/")  # reverse("profile"), URL-encoded

# The block rules, inline rules and core rules of the subset; every other rule is off.
BLOCK_RULES = ["blockquote", "code", "fence", "list", "paragraph"]
INLINE_RULES = ["autolink", "backticks", "emphasis", "entity", "escape", "link", "linkify", "newline", "text"]
INLINE_RULES2 = ["balance_pairs", "emphasis", "fragments_join"]
CORE_RULES = ["normalize", "block", "inline", "linkify", "text_join"]

# What the subset renders, and all the sanitiser lets through.
ALLOWED_TAGS = {"p", "br", "strong", "em", "code", "pre", "blockquote", "ul", "ol", "li", "a"}
# No attribute on every tag ("*": not the sanitiser's default `title` and `lang`); the links'
# class `mention` is in ALLOWED_CLASSES.
ALLOWED_ATTRIBUTES: dict[str, set[str]] = {"*": set(), "a": {"href"}, "ol": {"start"}}
ALLOWED_CLASSES = {"a": {"mention"}}


def _link_allowed(url: str) -> bool:
    """Only absolute http, https and mailto links (markdown-it has normalised the URL: entities
    decoded, percent-encoded, so `jav&#x61;script:` or a tab inside the scheme is seen here)."""
    return url.strip().lower().startswith(LINK_SCHEMES)


def _parser() -> MarkdownIt:
    parser = MarkdownIt("zero", {"breaks": True, "linkify": True, "html": False, "typographer": False})
    parser.enable(BLOCK_RULES + INLINE_RULES + INLINE_RULES2 + CORE_RULES)
    # Only addresses with their scheme (https://…) and e-mail addresses become links: without
    # it, a file name such as `views.py` would (.py is a top-level domain).
    assert parser.linkify is not None  # linkify-it-py is installed (requirements-runtime.txt)
    parser.linkify.set({"fuzzy_link": False, "fuzzy_email": True})
    parser.validateLink = _link_allowed  # type: ignore[method-assign]
    parser.core.ruler.push("links_and_mentions", _links_and_mentions)
    return parser


def _mention_tokens(text: str, usernames: Mapping[str, str], token: Token) -> list[Token] | None:
    """`text` split into text and mention links (None: it mentions nobody known)."""
    pieces: list[Token] = []
    position = 0
    for match in MENTION_PATTERN.finditer(text):
        name = mention_name(match.group(1), usernames)
        if name is None:
            continue
        end = match.start(1) + len(name)  # a sentence's dot after the name stays outside the link
        if match.start() > position:
            pieces.append(_text(text[position : match.start()], token))
        href = reverse("profile", args=[usernames[name]])
        link = Token("link_open", "a", 1, attrs={"class": "mention", "href": href})
        pieces += [link, _text(text[match.start() : end], token), Token("link_close", "a", -1)]
        position = end
    if not pieces:
        return None
    if position < len(text):
        pieces.append(_text(text[position:], token))
    return pieces


def _text(content: str, like: Token) -> Token:
    return Token("text", "", 0, content=content, level=like.level)


def _links_and_mentions(state: StateCore) -> None:
    """Unlink a link to nowhere (`[words]()`: markdown-it checks no empty address), and link
    @mentions in the text of each paragraph, outside links (code is never text)."""
    usernames: Mapping[str, str] = state.env.get("mention_usernames") or {}
    for block in state.tokens:
        if block.type != "inline" or not block.children:
            continue
        mentions = bool(usernames) and "@" in block.content
        if not mentions and "[" not in block.content:
            continue
        children: list[Token] = []
        links: list[bool] = []  # the open links, each kept or not
        for token in block.children:
            if token.type == "link_open":
                links.append(_link_allowed(str(token.attrs.get("href", ""))))
                if not links[-1]:
                    continue
            elif token.type == "link_close" and not links.pop():
                continue
            linked = _mention_tokens(token.content, usernames, token) if mentions and token.type == "text" else None
            children += linked if linked is not None and not links else [token]
        block.children = children


_PARSER = _parser()
_CLEANER = nh3.Cleaner(
    tags=ALLOWED_TAGS,
    attributes=ALLOWED_ATTRIBUTES,
    allowed_classes=ALLOWED_CLASSES,
    url_schemes={scheme.rstrip(":") for scheme in LINK_SCHEMES},
    link_rel=LINK_REL,
    strip_comments=True,
    # A relative address only as this module makes it, a mention's profile (/u/<name>/).
    url_relative=lambda url: url if MENTION_HREF.fullmatch(url) else None,
)


def markdown_html(body: str, usernames: Mapping[str, str] | None = None) -> str:
    """The body rendered and sanitised: HTML text, @mentions of `usernames` (lower-case name ->
    username, social.mentions.mention_usernames) linked to their profiles.

    A body renders in well under a millisecond, but one made to be slow (2,000 `[`) takes some
    25 ms, linear but steep: the last RENDERED_KEPT renders are kept, by body and the people it
    mentions, so a page read again and again (the timeline) renders each comment once."""
    if not body:
        return ""
    mentioned = tuple((name, usernames[name]) for name in mention_names(body) if name in usernames) if usernames else ()
    return _rendered(body, mentioned)


RENDERED_KEPT = 2048  # at most ~2,048 x (2,000 characters + their HTML): some 16 MB a process


@functools.lru_cache(maxsize=RENDERED_KEPT)
def _rendered(body: str, mentioned: tuple[tuple[str, str], ...]) -> str:
    env: dict[str, Any] = {"mention_usernames": dict(mentioned)}
    return _CLEANER.clean(_PARSER.render(body, env)).strip()


def comment_html(body: str, usernames: Mapping[str, str] | None = None) -> SafeString:
    """`markdown_html` for a template: sanitised above, so safe to print as it is."""
    return mark_safe(markdown_html(body, usernames))


def markdown_text(body: str) -> str:
    """The words of the rendered body, without its markup, on one line: an excerpt's source
    (`**late**` reads "late")."""
    words = nh3.clean(_rendered(body, ()), tags=set())  # the text, still escaped as HTML text
    return " ".join(html.unescape(words).split())
