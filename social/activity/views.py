"""The signed-in user's own recent activity (this month and last), in sentences and in their
time zone (the browser's, project.http.timezones)."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.utils import timezone

from project.dynamo.cursors import page_or_first
from social.activity import models, selectors

# What each logged action reads as; "{comment}" becomes a link to the comment it was on.
SENTENCES = {
    models.COMMENT: "You posted {comment}.",
    models.REPLY: "You posted {comment}, a reply.",
    models.EDIT: "You edited {comment}.",
    models.DELETE: "You deleted {comment}.",
    models.LIKE: "You liked {comment}.",
    models.UNLIKE: "You took back your like of {comment}.",
    models.VIEW: "You read {comment}.",
    models.READ: "You read your notifications.",
    models.LOGIN: "You logged in.",
    models.SIGNUP: "You created your account.",
    models.DELIVERY_RECEIVED: "You received a message from the staff.",
}


@login_required
def my_activity(request):
    user_id = str(request.user.pk)
    page = page_or_first(request, lambda cursor: selectors.activity_of_user(user_id=user_id, cursor=cursor))
    lines = []
    for entry in page.results:
        before, mark, after = SENTENCES.get(entry.action, f"{entry.action.capitalize()}.").partition("{comment}")
        lines.append({"entry": entry, "before": before, "after": after, "linked": bool(mark)})
    context = {"page": page, "lines": lines, "time_zone": timezone.get_current_timezone_name()}
    return render(request, "social/my_activity.html", context)
