"""`{% js_texts %}`: the words the site's scripts show (project/static/project/site.js, notifications' inbox.js and
push.js), worded on the server in the page's language and handed to the scripts in the page
(`{% js_texts %}`: a JSON `<script>` that runs nothing, so the Content-Security-Policy is
unchanged, and no request more). A script reads them with `window.pageText(key, values)`
(project/static/project/page_texts.js, loaded first on every page); a
text with a count comes as one form per CLDR category of the page's language (`one`, `few`,
`many`, `other`, as `Intl.PluralRules` names them), each worded by the catalogue's plural
rule. Keys are the English texts, which a script shows when a key is missing.
"""

from __future__ import annotations

from collections.abc import Callable

from django import template
from django.utils.html import json_script
from django.utils.safestring import SafeString
from django.utils.translation import get_language, gettext, ngettext

register = template.Library()

# A count that falls in each CLDR category of the site's languages (en, ja, pl).
CATEGORY_COUNTS = {"one": 1, "few": 3, "many": 5, "other": 11}


def _texts() -> dict[str, str]:
    return {
        "%(count)s / %(limit)s characters": gettext("%(count)s / %(limit)s characters"),
        "Posting…": gettext("Posting…"),
        "Your unsent text is back in the box: press %(button)s to send it.": gettext(
            "Your unsent text is back in the box: press %(button)s to send it."
        ),
        "Not saved: no connection. Nothing changed; try again when you are online.": gettext(
            "Not saved: no connection. Nothing changed; try again when you are online."
        ),
        "Not saved: something went wrong. Try again.": gettext("Not saved: something went wrong. Try again."),
        "New, now read": gettext("New, now read"),
        "This browser cannot receive push notifications.": gettext("This browser cannot receive push notifications."),
        "Push is on in this browser.": gettext("Push is on in this browser."),
        "Push is off in this browser.": gettext("Push is off in this browser."),
        "Asking your browser…": gettext("Asking your browser…"),
        "Your browser blocks notifications from this site: allow them in its site settings, then try again.": gettext(
            "Your browser blocks notifications from this site: allow them in its site settings, then try again."
        ),
        "Push could not be turned on here. Please try again later.": gettext(
            "Push could not be turned on here. Please try again later."
        ),
    }


def _counted() -> dict[str, dict[str, str]]:
    forms: dict[str, Callable[[int], str]] = {
        # English says "Too long by 1 characters" as it always did; other languages count it.
        "Too long by %(over)s characters: shorten it to %(limit)s to post it.": lambda count: ngettext(
            "Too long by %(over)s character: shorten it to %(limit)s to post it.",
            "Too long by %(over)s characters: shorten it to %(limit)s to post it.",
            count if get_language() != "en" else 2,
        ),
        "Show %(count)s new notifications": lambda count: ngettext(
            "Show %(count)s new notification", "Show %(count)s new notifications", count
        ),
    }
    return {key: {category: word(count) for category, count in CATEGORY_COUNTS.items()} for key, word in forms.items()}


@register.simple_tag
def js_texts() -> SafeString:
    """The `<script type="application/json" id="js-texts">` of the active language's texts."""
    texts: dict[str, object] = {**_texts(), **_counted()}
    return json_script(texts, "js-texts")
