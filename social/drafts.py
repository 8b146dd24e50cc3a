"""What a person sent but the site could not take yet, kept in their session until they
can: the text of a post or reply sent while logged out (or with a stale form), and a like
pressed after the session ended. Django's log-in keeps an anonymous session's data (it
only changes its key), so both survive the log-in round trip; a log-in as someone
else flushes them.

Neither may be planted from another site. A cross-site form arrives without the
SameSite=Lax session and CSRF cookies, so it is refused by the CSRF check, and a draft is
kept from a refused form only when the browser says the form was this site's own (its
Origin, or Sec-Fetch-Site) and only into the session the browser already has: never a new
session, whose cookie would replace the victim's and log them out. The anonymous path
(`social.views._keep_draft_and_log_in`) runs only after a passed CSRF check.

A kept like is done only on the redirect of the log-in it led to: that log-in (whose `next`
is the like's address) hands it to the person who logged in (`like_kept_hand_over`, on
`user_logged_in`), any other log-in drops it, it expires LIKE_KEPT_SECONDS after the press,
and the first visit of a like address after the log-in uses it up. Whoever logs in next in
that browser never likes anything for the person before them.

Kept in the database session (never in process memory); one of each per session, the
newest wins. For a person not logged in, each kept one may be a new session row: they
count per address against LIMIT_ANONYMOUS_KEEP, and past it nothing is kept (the page
says so).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.shortcuts import redirect, resolve_url
from django.utils.http import urlencode
from django.utils.translation import gettext

from project.clock import clock
from project.http.security import client_ip
from project.limits.store import address_subject, limit_hit, limit_rules

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponse

DRAFT_KEY = "kept_draft"
LIKE_KEY = "kept_like"
# A few minutes: long enough to log in (with a code from an app), too short for a stranger
# to find the browser still holding it.
LIKE_KEPT_SECONDS = 300
# More than a body may hold, so an over-long paste comes back whole (with the error).
DRAFT_MAX_CHARS = 20_000


def _anonymous_keep_allowed(request: HttpRequest) -> bool:
    """Logged in, or an address still under LIMIT_ANONYMOUS_KEEP (counted here)."""
    if request.user.is_authenticated or not settings.RATE_LIMITS_ENABLED:
        return True
    subject = address_subject(client_ip(request))
    return limit_hit(name="anonymous_keep", subject=subject, rules=limit_rules("anonymous_keep")).allowed


def draft_keep(request: HttpRequest, *, path: str, body: str) -> bool:
    """Keep the text posted to `path`; False (nothing kept) for empty text or past the limit."""
    body = (body or "")[:DRAFT_MAX_CHARS]
    if not body.strip() or not _anonymous_keep_allowed(request):
        return False
    request.session[DRAFT_KEY] = {"path": path, "body": body}
    return True


def form_from_this_site(request: HttpRequest) -> bool:
    """The browser says the form was this site's own page: its Origin (sent with every POST by
    current browsers) is this site or a CSRF_TRUSTED_ORIGINS one, or without an Origin its
    Sec-Fetch-Site is same-origin. A request saying neither is not believed."""
    origin = request.META.get("HTTP_ORIGIN")
    if origin is not None:
        return origin in {f"{request.scheme}://{request.get_host()}", *settings.CSRF_TRUSTED_ORIGINS}
    return request.META.get("HTTP_SEC_FETCH_SITE") == "same-origin"


def _session_held(request: HttpRequest) -> bool:
    """The request came with a session that exists (loading one that does not clears its key)."""
    session = request.session
    session.get(DRAFT_KEY)  # loads it
    return session.session_key is not None


def draft_keep_refused_form(request: HttpRequest, *, path: str, body: str) -> bool:
    """Keep the text of a form the CSRF check refused (a token out of date after a log-in in
    another tab), only if the form was this site's and into the session the browser sent.

    A cross-site form is refused too, and arrives without the Lax cookies: keeping its text
    would start a new session whose cookie replaces the victim's, logging them out.
    """
    if not form_from_this_site(request) or not _session_held(request):
        return False
    return draft_keep(request, path=path, body=body)


def draft_take(request: HttpRequest, *, path: str) -> str | None:
    """The text kept for `path`, removed from the session (it is shown once)."""
    kept = request.session.get(DRAFT_KEY)
    if not kept or kept.get("path") != path:
        return None
    del request.session[DRAFT_KEY]
    return kept.get("body") or None


def like_keep(request: HttpRequest, *, comment_id: str, action: str) -> bool:
    """Keep a like or unlike pressed while logged out; False (nothing kept) past the limit."""
    if not _anonymous_keep_allowed(request):
        return False
    request.session[LIKE_KEY] = {
        "comment_id": comment_id,
        "action": action,
        "path": request.path,  # where the log-in must send the person back for it to be done
        "kept_at": clock.now(),
    }
    return True


def _like_fresh(kept: dict[str, Any]) -> bool:
    return clock.now() - float(kept.get("kept_at", 0)) <= LIKE_KEPT_SECONDS


def like_kept_hand_over(sender: object, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    """On `user_logged_in`: a kept like becomes this person's only if this log-in goes back to
    the like's address (its `next`) within LIKE_KEPT_SECONDS of the press; any other log-in
    (someone logging in later in that browser, or the same person going elsewhere) drops it."""
    session = getattr(request, "session", None)
    if request is None or session is None or LIKE_KEY not in session:
        return
    kept = session.pop(LIKE_KEY)
    going_to = request.POST.get(REDIRECT_FIELD_NAME) or request.GET.get(REDIRECT_FIELD_NAME)
    if isinstance(kept, dict) and "user_id" not in kept and _like_fresh(kept) and going_to == kept.get("path"):
        session[LIKE_KEY] = {**kept, "user_id": str(user.pk)}


def like_take(request: HttpRequest, *, comment_id: str) -> dict[str, str] | None:
    """The like or unlike to do now, on the log-in's redirect to this comment's like address,
    for the person that log-in let in, before it expires; else None. Used up either way."""
    kept = request.session.pop(LIKE_KEY, None)
    if not isinstance(kept, dict) or kept.get("comment_id") != comment_id or not _like_fresh(kept):
        return None
    if not request.user.is_authenticated or kept.get("user_id") != str(request.user.pk):
        return None
    return kept


def form_keep(request: HttpRequest, *, path: str, fields: dict[str, list[str]]) -> bool:
    """Keep the values of a settings form saved to `path` after the session ended (as a post's
    text is kept: one per session, the newest wins, limited per address), to be put back in the
    form after the log-in; nothing is saved until the person presses Save again. False: nothing
    kept (no value, or past the limit)."""
    fields = {name: values for name, values in fields.items() if name != "csrfmiddlewaretoken"}
    if not any(value.strip() for values in fields.values() for value in values):
        return False
    return draft_keep(request, path=path, body=json.dumps(fields)[:DRAFT_MAX_CHARS])


def form_take(request: HttpRequest, *, path: str) -> dict[str, list[str]] | None:
    """The form values kept for `path` (`form_keep`), removed from the session (shown once)."""
    kept = draft_take(request, path=path)
    if not kept:
        return None
    try:
        fields = json.loads(kept)
    except ValueError:  # a post's text kept for the same address: not a form's values
        return None
    if not isinstance(fields, dict):
        return None
    return {str(name): [str(value) for value in values] for name, values in fields.items() if isinstance(values, list)}


def form_keep_and_log_in(request: HttpRequest, *, what: str) -> HttpResponse:
    """A settings form sent after the session ended (or while logged out): nothing is saved, the
    person is told, and after the log-in the form has the values back (`form_take`)."""
    if request.method == "POST":
        fields = {name: request.POST.getlist(name) for name in request.POST}
        if form_keep(request, path=request.path, fields=fields):
            messages.info(
                request,
                gettext(
                    "You are not logged in, so %(what)s were not saved. Log in and your changes will be back in the "
                    "form."
                )
                % {"what": what},
            )
        else:
            messages.info(
                request,
                gettext("You are not logged in, so %(what)s were not saved: log in and save them again.")
                % {"what": what},
            )
    return redirect(login_url(request.path))


def login_url(next_path: str) -> str:
    return f"{resolve_url(settings.LOGIN_URL)}?{urlencode({'next': next_path})}"
