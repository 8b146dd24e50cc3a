"""The reaction buttons' form (`/c/<id>/react/`): reactions without JavaScript, as the like form works."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.http import require_http_methods

from actions.reactions import reaction_add, reaction_remove
from social import drafts
from social.comment_forms import back_url, comment_change_and_go_back
from social.reactions.names import REACTIONS

REACTION_MISSING = (
    "The reaction form named no reaction (its reaction field: add:<name> or remove:<name>), so nothing was changed."
)


def reaction_pressed(value: object) -> tuple[bool, str] | None:
    """A button's value, `add:<name>` or `remove:<name>`, as (adding, name); None when it is neither."""
    verb, _, name = str(value or "").partition(":")
    if verb not in ("add", "remove") or name not in REACTIONS:
        return None
    return verb == "add", name


@require_http_methods(["GET", "POST"])
def comment_react(request: HttpRequest, comment_id: str) -> HttpResponse:
    """A reaction button's form (without JavaScript, or when the API call failed): a POST that
    redirects back to the comment on its page. The button says what it does (`add:heart`, or
    `remove:heart` when pressed), so sending the form twice does it once.

    Sent after the session ended, the reaction is kept through the log-in as a like is
    (social/drafts.py): the log-in comes back here with a GET, which does it and says so.
    """
    if request.method == "GET":
        kept = drafts.like_take(request, comment_id=comment_id) if request.user.is_authenticated else None
        pressed = reaction_pressed(kept["action"]) if kept else None
        if pressed is None:
            messages.info(request, gettext("Nothing was changed: press a reaction to add it or take it back."))
            return redirect("comment", comment_id=comment_id)
        back = reverse("comment", args=[comment_id])
        return _react_and_go_back(request, comment_id=comment_id, pressed=pressed, back=back, say_done=True)
    value = request.POST.get("reaction")
    pressed = reaction_pressed(value)
    if pressed is None:
        return render(request, "400.html", {"reason": REACTION_MISSING}, status=400)
    if not request.user.is_authenticated:
        if drafts.like_keep(request, comment_id=comment_id, action=str(value)):
            messages.info(request, gettext("Log in to react to that comment: it is done as soon as you are in."))
        else:
            messages.info(request, gettext("Log in, then press the reaction again."))
        return redirect(drafts.login_url(request.path))
    return _react_and_go_back(request, comment_id=comment_id, pressed=pressed, back=back_url(request))


def _react_and_go_back(
    request: HttpRequest, *, comment_id: str, pressed: tuple[bool, str], back: str, say_done: bool = False
) -> HttpResponse:
    adding, name = pressed
    user_id = str(request.user.pk)

    def change() -> object:
        if adding:
            return reaction_add(comment_id=comment_id, user_id=user_id, name=name)
        return reaction_remove(comment_id=comment_id, user_id=user_id, name=name)

    emoji = REACTIONS[name]
    done = f"You reacted {emoji}." if adding else f"You took back your {emoji}."
    return comment_change_and_go_back(
        request, comment_id=comment_id, back=back, change=change, done=done if say_done else None
    )
