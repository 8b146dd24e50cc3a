"""The inbox page: notifications with unread ones highlighted, "Mark all as read"."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from notifications import selectors, services
from project.dynamo.cursors import page_or_first
from project.errors import ApplicationError
from project.http.fresh import FRESH_BADGE


@login_required
def inbox(request):
    """Show a page of notifications; the page's script then marks the unread ones shown read."""
    user_id = str(request.user.pk)
    page = page_or_first(
        request, lambda cursor: selectors.notification_inbox(user_id=user_id, cursor=cursor, excerpts=True)
    )
    return render(request, "notifications/inbox.html", {"page": page})


@login_required
@require_POST
def inbox_read_all(request):
    """The no-JavaScript "Mark all as read" button."""
    try:
        marked = services.inbox_mark_all_read(user_id=str(request.user.pk))
    except ApplicationError as error:
        messages.error(request, error.message)
    else:
        if marked:
            messages.success(
                request,
                ngettext("Marked %(count)d notification as read.", "Marked %(count)d notifications as read.", marked)
                % {"count": marked},
            )
    response = redirect("notifications")
    FRESH_BADGE.remember(request, response, value=str(request.user.pk))  # the next pages' badge reads it exactly
    return response
