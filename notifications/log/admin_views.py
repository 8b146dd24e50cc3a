"""Admin page: any person's notification log (the page they see under their notification
settings), by username; linked from the person's page in the admin's Users."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.urls import path
from django.utils.translation import gettext, gettext_noop

from notifications.log.selectors import CHANNELS, notification_log
from project.admin.pages import AdminPage, DynamoAdmin, dynamo_admin


class NotificationLogAdmin(DynamoAdmin):
    pages = [AdminPage(gettext_noop("Notification log"), "dynamo-notification-log")]

    def get_urls(self):
        view = self.admin_site.admin_view(self.log_view)
        return [path("notification-log/", view, name="dynamo-notification-log")]

    def log_view(self, request):
        username = request.GET.get("username", "").strip()
        context = {"title": gettext("Notification log"), "username": username, "note": "", "channels": CHANNELS}
        if username:
            user = get_user_model().objects.filter(username__iexact=username).first()
            if user is None:
                context["note"] = gettext("No user named %(username)s.") % {"username": repr(username)}
            else:
                events = notification_log(user_id=str(user.pk))
                context["found_user"] = user
                context["rows"] = [(event, [event.channels.get(channel) for channel in CHANNELS]) for event in events]
        return self.render(request, "admin/dynamo/notification_log.html", context)


dynamo_admin.register(NotificationLogAdmin)
