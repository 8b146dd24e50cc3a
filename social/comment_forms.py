"""What the like and reaction forms share (`/c/<id>/like/`, `/c/<id>/react/`): where they go back
to, and the change with its redirect, for the plain forms that work without JavaScript."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponseRedirect
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext_lazy

from project.errors import ApplicationError, NotFound
from project.http.fresh import FRESH_LIKES
from social import selectors

COMMENT_DELETED = gettext_lazy("That comment was deleted by its author, so nothing was changed.")
COMMENT_GONE = gettext_lazy(
    "That comment is no longer available: it was removed by the moderators, so nothing was changed."
)


def back_url(request: HttpRequest) -> str:
    """The page the form was on (its `next`), or the timeline for anything off-site."""
    back = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
        back = reverse("timeline")
    return back


def comment_change_and_go_back(
    request: HttpRequest, *, comment_id: str, back: str, change: Callable[[], object], done: str | None = None
) -> HttpResponseRedirect:
    """A like's or reaction's plain form: run `change`, then back to the comment on `back`, saying
    `done` when given. The comment hidden or deleted while the page was open: back to a page that
    still lists it, saying why (404 for a comment that never was); any other refusal: its message.
    The page it lands on shows this comment's counts exactly (`FRESH_LIKES`)."""
    try:
        change()
        if done:
            messages.success(request, done)
    except NotFound:
        found = selectors.comment_find(comment_id=comment_id)
        if found is None:
            raise Http404("No such comment.") from None
        messages.error(request, COMMENT_DELETED if found.deleted_at else COMMENT_GONE)
        if not found.deleted_at and urlsplit(back).path == reverse("comment", args=[comment_id]):
            back = reverse("timeline")
        return HttpResponseRedirect(back)
    except ApplicationError as error:
        messages.error(request, error.message)
    response = HttpResponseRedirect(f"{back}#c-{comment_id}")
    FRESH_LIKES.remember(request, response, value=comment_id)
    return response
