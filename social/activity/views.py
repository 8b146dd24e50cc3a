"""The signed-in user's own recent activity (this month and last)."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from project.errors import ApplicationError
from social.activity import selectors


@login_required
def my_activity(request):
    user_id = str(request.user.pk)
    try:
        page = selectors.activity_of_user(user_id=user_id, cursor=request.GET.get("cursor") or None)
    except ApplicationError:
        page = selectors.activity_of_user(user_id=user_id)  # a mangled cursor: start over
    return render(request, "social/my_activity.html", {"page": page})
