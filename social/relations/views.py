"""Pages: the people one blocked or muted, with undo (/me/people/), and the profile's Block /
Mute buttons (`POST /u/<username>/block/`, `/mute/`). Edge module: it calls actions.relations."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import redirect, render
from django.utils.translation import gettext, gettext_lazy
from django.views.decorators.http import require_POST

from actions.relations import relation_change
from project.errors import ApplicationError, NotFound
from social.relations.selectors import BLOCK, MUTE, relations_people

SAID = {
    (BLOCK, True): gettext_lazy(
        "Blocked {name}: they can no longer reply to your comments, and nothing of theirs reaches you."
    ),
    (BLOCK, False): gettext_lazy("Unblocked {name}: what they do from now on can reach you again."),
    (MUTE, True): gettext_lazy(
        "Muted {name}: their comments and notifications are hidden from you. They are not told."
    ),
    (MUTE, False): gettext_lazy("Unmuted {name}."),
}
ACTIONS = {"block": (BLOCK, True), "unblock": (BLOCK, False), "mute": (MUTE, True), "unmute": (MUTE, False)}


@login_required
def relations_settings(request):
    """The people the signed-in person blocked or muted, each with its Unblock / Unmute button."""
    people = relations_people(user_id=str(request.user.pk))
    return render(
        request,
        "social/relations/people.html",
        {
            "blocked": [person for person in people if person.blocked],
            "muted": [person for person in people if person.muted],
        },
    )


@login_required
@require_POST
def relation_set(request, username: str):
    """A Block / Unblock / Mute / Unmute button (`action`); back to where it was pressed
    (`back`: the profile or the list), with a message."""
    back = "relations" if request.POST.get("back") == "list" else None
    chosen = ACTIONS.get(request.POST.get("action", ""))
    if chosen is None:
        messages.error(request, gettext("That button's action is unknown: nothing was changed."))
    else:
        kind, on = chosen
        try:
            change = relation_change(owner_id=str(request.user.pk), username=username, kind=kind, on=on)
        except NotFound:
            raise Http404("No such person.") from None
        except ApplicationError as error:
            messages.error(request, error.message)
        else:
            messages.success(request, str(SAID[kind, on]).format(name=change.username))
    return redirect("relations") if back else redirect("profile", username=username)
