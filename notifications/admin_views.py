"""Admin page: one user's notifications of every kind (likes, replies, messages) and badge, by username."""

from django.contrib.auth import get_user_model
from django.template.response import TemplateResponse
from django.urls import path

from notifications import selectors
from project.admin_pages import AdminPage, dynamo_admin

PAGES = [AdminPage("User notifications", "dynamo-user-notifications")]


def urls(site):
    def user_notifications(request):
        username = request.GET.get("username", "").strip()
        found_user = None
        data = None
        note = ""
        if username:
            found_user = get_user_model().objects.filter(username__iexact=username).first()
            if found_user is None:
                note = f"No user named {username!r}."
            else:
                data = selectors.notifications_for_staff(user_id=str(found_user.pk))
        context = {
            **site.each_context(request),
            "title": "User notifications",
            "username": username,
            "found_user": found_user,
            "data": data,
            "note": note,
        }
        return TemplateResponse(request, "admin/dynamo/user_notifications.html", context)

    return [path("notifications/", site.admin_view(user_notifications), name="dynamo-user-notifications")]


dynamo_admin.register(pages=PAGES, urls=urls)
