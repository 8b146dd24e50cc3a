"""Admin → DynamoDB → Reports: the open queue (newest or most reported first), a case with its
reports, and the staff's decisions (resolve, hide, unhide, delete, suspend the author), each
one audited (Admin → Social → Moderation actions)."""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpResponseRedirect
from django.urls import path, reverse
from django.utils.decorators import method_decorator
from django.utils.translation import gettext, gettext_lazy, gettext_noop
from django.views.decorators.http import require_POST

from project.admin.pages import AdminPage, DynamoAdmin
from project.dynamo.cursors import page_or_first
from project.errors import ApplicationError
from social.moderation import selectors, staff_services
from social.moderation.reasons import REASONS

DONE = {
    "resolve": gettext_lazy("The reports are resolved; the comment stays as it is."),
    "hide": gettext_lazy("The comment is hidden."),
    "unhide": gettext_lazy("The comment is visible again; reports will not hide it again."),
    "delete": gettext_lazy("The comment's text is deleted."),
    "suspend": gettext_lazy("The author is suspended: logged out everywhere, their token deleted."),
    "unsuspend": gettext_lazy("The author can log in again."),
}
# Decisions that take something from the author: each asks for a second, confirming POST
# (`confirmed=yes`, from a page that works without JavaScript) before it acts.
CONFIRM = {
    "hide": gettext_lazy("Hide this comment from everyone but its author?"),
    "delete": gettext_lazy("Delete this comment's text? This cannot be undone."),
    "suspend": gettext_lazy("Suspend the author? They are logged out everywhere and cannot log in until reinstated."),
}
# Each confirmation's button, worded whole (an action's name is not a word of the reader's language).
CONFIRM_YES = {
    "hide": gettext_lazy("Yes, hide"),
    "delete": gettext_lazy("Yes, delete"),
    "suspend": gettext_lazy("Yes, suspend"),
}


def staff_decide(*, request, comment_id: str, action: str, note: str = "", source: str = "admin") -> None:
    """Apply one staff decision on a reported comment (or its author), audited."""
    staff = request.user
    if action == "resolve":
        staff_services.case_resolve(comment_id=comment_id, staff=staff, note=note, source=source)
    elif action == "hide":
        staff_services.comment_hide_by_staff(comment_id=comment_id, staff=staff, note=note, source=source)
    elif action == "unhide":
        staff_services.comment_unhide_by_staff(comment_id=comment_id, staff=staff, note=note, source=source)
    elif action == "delete":
        staff_services.comment_delete_by_staff(comment_id=comment_id, staff=staff, note=note, source=source)
    elif action in ("suspend", "unsuspend"):
        case = selectors.case_get(comment_id=comment_id)
        author_id = case.author.id if case and case.author else ""
        act = staff_services.user_suspend if action == "suspend" else staff_services.user_unsuspend
        act(user_id=author_id, staff=staff, note=note or f"author of comment {comment_id}", source=source)
    else:
        raise ApplicationError(gettext("Unknown action."), field="action")


class ReportsAdmin(DynamoAdmin):
    pages = [AdminPage(gettext_noop("Reports"), "dynamo-reports")]

    def get_urls(self):
        wrap = self.admin_site.admin_view
        return [
            path("reports/", wrap(self.queue_view), name="dynamo-reports"),
            path("reports/<str:comment_id>/", wrap(self.case_view), name="dynamo-report-case"),
            path("reports/<str:comment_id>/decide/", wrap(self.decide_view), name="dynamo-report-decide"),
        ]

    def queue_view(self, request):
        order = "most" if request.GET.get("order") == "most" else "newest"
        page = page_or_first(request, lambda cursor: selectors.report_queue(order=order, cursor=cursor))
        context = {"title": gettext("Reports"), "order": order, "page": page, "reasons": REASONS}
        return self.render(request, "admin/dynamo/reports.html", context)

    def case_view(self, request, comment_id):
        case = selectors.case_get(comment_id=comment_id)
        if case is None:
            messages.error(
                request,
                gettext("Nobody reported comment %(comment_id_64)s.") % {"comment_id_64": repr(comment_id[:64])},
            )
            return HttpResponseRedirect(reverse("admin:dynamo-reports"))
        reports = selectors.case_reports(comment_id=comment_id)
        context = {
            "title": gettext("Reported comment"),
            "case": case,
            "reports": reports,
            "history": selectors.case_versions(comment_id=comment_id, reports=reports),
            "reasons": REASONS,
        }
        return self.render(request, "admin/dynamo/report_case.html", context)

    @method_decorator(require_POST)
    def decide_view(self, request, comment_id):
        action = request.POST.get("action", "")
        note = request.POST.get("note", "")[:500]
        if action in CONFIRM and request.POST.get("confirmed") != "yes":
            context = {
                "title": gettext("Confirm"),
                "case": selectors.case_get(comment_id=comment_id),
                "comment_id": comment_id,
                "action": action,
                "question": CONFIRM[action],
                "yes": CONFIRM_YES[action],
                "note": note,
                "back": request.POST.get("back", ""),
            }
            return self.render(request, "admin/dynamo/report_confirm.html", context)
        try:
            staff_decide(request=request, comment_id=comment_id, action=action, note=note)
            messages.success(request, DONE.get(action) or gettext("Done."))
        except ApplicationError as error:
            messages.error(request, error.message)
        if request.POST.get("back") == "queue":
            return HttpResponseRedirect(reverse("admin:dynamo-reports"))
        return HttpResponseRedirect(reverse("admin:dynamo-report-case", args=[comment_id]))
