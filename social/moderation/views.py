"""The report page: `/c/<id>/report/` (a plain form, no JavaScript needed), linked as "Report"
from each comment of someone else."""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext, gettext_lazy

from project.errors import ApplicationError, NotFound, RateLimited
from project.http.views import refused_page
from social import drafts
from social import selectors as social_selectors
from social.moderation import selectors, services
from social.moderation.reasons import NOTE_MAX_LENGTH, REASONS, reason_label


class ReportForm(forms.Form):
    reason = forms.ChoiceField(
        choices=list(REASONS.items()), widget=forms.RadioSelect, label=gettext_lazy("Why are you reporting it?")
    )
    note = forms.CharField(
        required=False,
        max_length=NOTE_MAX_LENGTH,
        widget=forms.Textarea(attrs={"rows": 3}),
        label=gettext_lazy("Anything the moderators should know? (optional)"),
    )


def _back(comment) -> str:
    if comment.parent_id:
        return f"{reverse('comment', args=[comment.parent_id])}#c-{comment.id}"
    return reverse("comment", args=[comment.id])


def _keep_note_and_log_in(request):
    """Logged out (or the session ended) while reporting: keep the note through the log-in."""
    if request.method == "POST":
        if drafts.draft_keep(request, path=request.path, body=request.POST.get("note", "")):
            messages.info(
                request,
                gettext(
                    "You are not logged in, so nothing was reported. Log in and your note will be back in the form."
                ),
            )
        else:
            messages.info(
                request, gettext("You are not logged in, so nothing was reported: log in and report it again.")
            )
    return redirect(drafts.login_url(request.path))


def comment_report(request, comment_id):
    if not request.user.is_authenticated:
        return _keep_note_and_log_in(request)
    user_id = str(request.user.pk)
    try:
        comment = social_selectors.comment_get(comment_id=comment_id, viewer_id=user_id)
    except NotFound:
        comment = None
    if comment is None or comment.deleted:
        raise Http404("No such comment.")
    mine = selectors.report_of(comment_id=comment_id, reporter_id=user_id)
    if comment.author.id == user_id:
        messages.info(request, gettext("That is your own comment: you can edit or delete it instead."))
        return HttpResponseRedirect(_back(comment))
    kept = drafts.draft_take(request, path=request.path) if request.method == "GET" else None
    form, refused = ReportForm(request.POST or None, initial={"note": kept or ""}), None
    if request.method == "POST" and mine is None and form.is_valid():
        try:
            services.report_create(
                comment_id=comment_id,
                reporter_id=user_id,
                reason=form.cleaned_data["reason"],
                note=form.cleaned_data["note"],
            )
        except NotFound:
            raise Http404("No such comment.") from None
        except RateLimited as error:
            form.add_error(None, error.message)
            refused = error
        except ApplicationError as error:
            form.add_error(error.field if error.field in form.fields else None, error.message)
        else:
            messages.success(request, gettext("Thank you: your report was sent to the moderators."))
            return HttpResponseRedirect(_back(comment))
    label = reason_label(mine.reason) if mine else ""
    context = {"comment": comment, "form": form, "mine": mine, "reason_label": label}
    return refused_page(render(request, "moderation/report.html", context), refused)
