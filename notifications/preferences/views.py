"""Pages: /me/notifications/ (preferences, muted and watched threads) and the comment page's
Mute / Watch buttons (`/c/<id>/mute/`, `/c/<id>/watch/`). Usable without JavaScript."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, QueryDict
from django.shortcuts import redirect, render
from django.utils.translation import gettext, gettext_lazy
from django.views.decorators.http import require_POST

from notifications.preferences import selectors, services
from project.errors import ApplicationError, NotFound
from project.http.fresh import FreshCookie
from social import drafts

# Threads this browser muted, watched or undid in the last seconds: the settings page reads
# them from the table (its list comes from an index, which may trail a write by a second).
FRESH_THREADS = FreshCookie("fresh_threads", selectors.is_thread_id)

KIND_LABELS = {
    "like": gettext_lazy("Likes of your comments"),
    "reaction": gettext_lazy("Reactions to your comments"),
    "reply": gettext_lazy("Replies to your comments, and in threads you watch"),
    "mention": gettext_lazy("Mentions of you (@name)"),
    "message": gettext_lazy("Messages from the staff"),
}
CHANNEL_LABELS = {"inbox": gettext_lazy("Inbox"), "email": gettext_lazy("E-mail"), "push": gettext_lazy("Push")}
DIGEST_LABELS = {
    "off": gettext_lazy("No digest"),
    "daily": gettext_lazy("Daily"),
    "weekly": gettext_lazy("Weekly (Mondays)"),
}
THREAD_ACTIONS = {
    "mute": (services.thread_mute, gettext_lazy("Muted: nothing from this thread reaches you now.")),
    "unmute": (services.thread_unmute, gettext_lazy("Unmuted: this thread notifies you again.")),
    "watch": (services.thread_watch, gettext_lazy("Watching: every reply in this thread notifies you.")),
    "unwatch": (services.thread_unwatch, gettext_lazy("You no longer watch this thread.")),
}


class PreferencesForm(forms.Form):
    """A checkbox per kind and channel (staff messages' inbox is fixed on), the digest.

    Each checkbox carries the value it was shown with (`shown_<flag>`), so a save changes
    only what the person changed: a save in one tab never undoes a change made meanwhile
    in another tab or through the API.
    """

    digest = forms.ChoiceField(
        choices=list(DIGEST_LABELS.items()), widget=forms.RadioSelect, label=gettext_lazy("E-mail digest")
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for kind in selectors.KINDS:
            for channel in selectors.CHANNELS:
                name = selectors.preferences_attribute(kind, channel)
                fixed = (kind, channel) in selectors.ALWAYS_ON
                self.fields[name] = forms.BooleanField(
                    required=False,
                    disabled=fixed,
                    label=f"{KIND_LABELS[kind]}: {CHANNEL_LABELS[channel]}",
                )
                self.fields[f"shown_{name}"] = forms.BooleanField(required=False, widget=forms.HiddenInput)
        self.fields["shown_digest"] = forms.CharField(required=False, widget=forms.HiddenInput)

    @classmethod
    def shown(cls, preferences: selectors.NotifyPreferences) -> PreferencesForm:
        initial: dict[str, object] = {"digest": preferences.digest, "shown_digest": preferences.digest}
        for kind in selectors.KINDS:
            for channel in selectors.CHANNELS:
                name = selectors.preferences_attribute(kind, channel)
                initial[name] = initial[f"shown_{name}"] = preferences.wants(kind, channel)
        return cls(initial=initial)

    def patch(self) -> dict[str, object]:
        """The API's PATCH body of what the person changed on this form."""
        data = self.cleaned_data
        kinds: dict[str, dict[str, bool]] = {}
        for kind in selectors.KINDS:
            for channel in selectors.CHANNELS:
                name = selectors.preferences_attribute(kind, channel)
                if (kind, channel) in selectors.ALWAYS_ON or data[name] == data[f"shown_{name}"]:
                    continue
                kinds.setdefault(kind, {})[channel] = data[name]
        patch: dict[str, object] = {"kinds": kinds} if kinds else {}
        if data["digest"] != data["shown_digest"]:
            patch["digest"] = data["digest"]
        return patch

    def grid(self) -> list[dict[str, object]]:
        """Rows of the kind x channel table: the kind's label and its bound checkboxes."""
        return [
            {
                "label": KIND_LABELS[kind],
                "cells": [self[selectors.preferences_attribute(kind, channel)] for channel in selectors.CHANNELS],
                "hidden": [self[f"shown_{selectors.preferences_attribute(kind, c)}"] for c in selectors.CHANNELS],
            }
            for kind in selectors.KINDS
        ]


def preferences_page(request):
    """What reaches you: the preferences form, and the threads you muted or watch, each with undo."""
    if not request.user.is_authenticated:
        return drafts.form_keep_and_log_in(request, what=gettext("your notification settings"))
    user_id = str(request.user.pk)
    if request.method == "POST":
        form = PreferencesForm(request.POST)
        if form.is_valid():
            try:
                services.preferences_update(user_id=user_id, patch=form.patch())
            except ApplicationError as error:
                messages.error(request, error.message)
            else:
                messages.success(request, gettext("Saved: your notification settings."))
            return redirect("notification-preferences")
    elif (kept := drafts.form_take(request, path=request.path)) is not None:
        # Saved after the session ended: the values sent then, with the values shown then (so a
        # Save changes only what the person changed), waiting for Save.
        data = QueryDict(mutable=True)
        for name, values in kept.items():
            data.setlist(name, values)
        form = PreferencesForm(data)
        messages.info(request, gettext("Your changes are back in the form, not saved yet: press Save to keep them."))
    else:
        # Strongly consistent: a save lands on this page, which must show it.
        form = PreferencesForm.shown(selectors.preferences_get(user_id=user_id, consistent=True))
    threads = selectors.thread_subscriptions_shown(user_id=user_id, fresh=FRESH_THREADS.names(request))
    context = {
        "form": form,
        "channels": [CHANNEL_LABELS[channel] for channel in selectors.CHANNELS],
        "muted": [thread for thread in threads if thread.state == "mute"],
        "watched": [thread for thread in threads if thread.state == "watch"],
    }
    return render(request, "notifications/preferences.html", context)


@login_required
@require_POST
def thread_undo(request):
    """The settings page's Unmute / Stop watching buttons (by thread id: the thread's comment
    may be gone since, and its mute must still be undoable)."""
    action = request.POST.get("action")
    thread_id = request.POST.get("thread_id", "")
    if action not in ("unmute", "unwatch") or not thread_id:
        messages.error(request, gettext("That button said neither unmute nor stop watching: nothing was changed."))
        return redirect("notification-preferences")
    return _thread_change(request, action=action, thread_id=thread_id, then=redirect("notification-preferences"))


def _thread_change(request, *, action: str, thread_id: str, then):
    """Mute, unmute, watch or stop watching the thread `thread_id`, say how it went, and answer
    `then`, which shows the thread's new state exactly (FRESH_THREADS)."""
    change, said = THREAD_ACTIONS[action]
    try:
        change(user_id=str(request.user.pk), thread_id=thread_id)
    except ApplicationError as error:
        messages.error(request, error.message)
    else:
        messages.success(request, said)
    if selectors.is_thread_id(thread_id):
        FRESH_THREADS.remember(request, then, value=thread_id)
    return then


def _comment_thread_change(request, comment_id: str, allowed: tuple[str, str]):
    action = request.POST.get("action", allowed[0])
    if action not in allowed:
        messages.error(request, gettext("That button's action is unknown: nothing was changed."))
        return redirect("comment", comment_id=comment_id)
    try:
        thread_id = selectors.comment_thread_find(comment_id=comment_id)
    except NotFound:
        raise Http404("No such comment.") from None
    return _thread_change(request, action=action, thread_id=thread_id, then=redirect("comment", comment_id=comment_id))


@login_required
@require_POST
def comment_mute(request, comment_id):
    """The comment page's Mute / Unmute button (`action` = mute | unmute)."""
    return _comment_thread_change(request, comment_id, ("mute", "unmute"))


@login_required
@require_POST
def comment_watch(request, comment_id):
    """The comment page's Watch / Stop watching button (`action` = watch | unwatch)."""
    return _comment_thread_change(request, comment_id, ("watch", "unwatch"))
