"""The signed-in user's own recent activity (this month and last)."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from project.cursors import page_or_first
from social.activity import selectors


@login_required
def my_activity(request):
    user_id = str(request.user.pk)
    page = page_or_first(request, lambda cursor: selectors.activity_of_user(user_id=user_id, cursor=cursor))
    return render(request, "social/my_activity.html", {"page": page})
