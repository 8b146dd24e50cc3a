"""The bodies of notices (a moderation decision, failed log-ins): stored as a kind of text and its
parameters, worded in the reader's language when read.

A notice points at nothing, so its entry keeps its text inline; what it keeps is `notice_body`'s
JSON (`{"notice": "comment-hidden", "quote": "…", "by": "reports"}`), never words of a language,
so changing one's language changes the notices already in the inbox. `notice_body_text` words
it in the active language (the reader's: pages, the API, mails and digests are rendered in it).
A body stored before notices were kept this way is English prose: it is shown as it is.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping

from django.utils.translation import gettext, gettext_noop, ngettext

NOTICE_KEY = "notice"

ASK_TEXT = gettext_noop(
    "If you think this is a mistake, reply to any mail from this site or write to its operators, naming the comment."
)


def _quoted(params: Mapping[str, object]) -> str:
    quote = str(params.get("quote") or "")
    return gettext("“%(quote)s”") % {"quote": quote} if quote else gettext("your comment")


def _comment_hidden(params: Mapping[str, object]) -> str:
    values = {"quote": _quoted(params)}
    if params.get("by") == "reports":
        text = gettext("Your comment %(quote)s was hidden after several people reported it: nobody else sees it now.")
    else:
        text = gettext("Your comment %(quote)s was hidden by the moderators: nobody else sees it now.")
    return f"{text % values} {gettext(ASK_TEXT)}"


def _comment_unhidden(params: Mapping[str, object]) -> str:
    return gettext("The moderators looked at your comment %(quote)s and it is visible to everyone again.") % {
        "quote": _quoted(params)
    }


def _report_hidden(params: Mapping[str, object]) -> str:
    return gettext("The moderators looked at the comment you reported and hid it. Thank you for telling us.")


def _report_kept(params: Mapping[str, object]) -> str:
    return gettext(
        "The moderators looked at the comment you reported and found it within the rules: "
        "it stays up. Thank you for telling us."
    )


def _count(params: Mapping[str, object], name: str) -> int:
    value = params.get(name)
    return value if isinstance(value, int) else 1


def _login_failures(params: Mapping[str, object]) -> str:
    failures, addresses = _count(params, "failures"), _count(params, "addresses")
    tried = ngettext(
        "%(count)d log-in with a wrong password or code today",
        "%(count)d log-ins with a wrong password or code today",
        failures,
    ) % {"count": failures}
    networks = ngettext("from %(count)d network.", "from %(count)d networks.", addresses) % {"count": addresses}
    advice = gettext(
        "If that was not you, nothing is needed: browsers you have logged in from before are not affected, "
        "and a new one gets in through a password reset. If your password is weak or used elsewhere, "
        "change it, or turn on two-factor log-in in your settings."
    )
    return gettext("%(tried)s, %(networks)s %(advice)s") % {"tried": tried, "networks": networks, "advice": advice}


NOTICE_TEXTS: dict[str, Callable[[Mapping[str, object]], str]] = {
    "comment-hidden": _comment_hidden,
    "comment-unhidden": _comment_unhidden,
    "report-hidden": _report_hidden,
    "report-kept": _report_kept,
    "login-failures": _login_failures,
}


def notice_body(notice: str, **params: str | int) -> str:
    """The stored body of a notice: which text, with what (no words of any language)."""
    if notice not in NOTICE_TEXTS:
        raise ValueError(f"unknown notice text {notice!r}")
    return json.dumps({NOTICE_KEY: notice, **params}, ensure_ascii=False, separators=(",", ":"))


def notice_body_text(body: str) -> str:
    """A stored notice body worded in the active language; an old English body as it is."""
    if not body.startswith("{"):
        return body
    try:
        stored = json.loads(body)
    except ValueError:
        return body
    if not isinstance(stored, dict) or stored.get(NOTICE_KEY) not in NOTICE_TEXTS:
        return body
    return NOTICE_TEXTS[stored[NOTICE_KEY]](stored)
