"""Admin page: one user's notifications of every kind (likes, replies, messages) and badge, by username."""

from django.contrib.auth import get_user_model
from django.urls import path
from django.utils.translation import gettext, gettext_noop

from notifications import selectors
from notifications.preferences import selectors as preferences_selectors
from project.admin.pages import AdminPage, DynamoAdmin, dynamo_admin


class UserNotificationsAdmin(DynamoAdmin):
    pages = [AdminPage(gettext_noop("User notifications"), "dynamo-user-notifications")]

    def get_urls(self):
        view = self.admin_site.admin_view(self.user_notifications_view)
        return [path("notifications/", view, name="dynamo-user-notifications")]

    def user_notifications_view(self, request):
        username = request.GET.get("username", "").strip()
        found_user = None
        data = None
        preferences = None
        threads = None
        note = ""
        if username:
            found_user = get_user_model().objects.filter(username__iexact=username).first()
            if found_user is None:
                note = gettext("No user named %(username)s.") % {"username": repr(username)}
            else:
                data = selectors.notifications_for_staff(user_id=str(found_user.pk))
                preferences = preferences_selectors.preferences_get(user_id=str(found_user.pk), consistent=True)
                threads = preferences_selectors.thread_subscriptions_shown(user_id=str(found_user.pk))
        context = {
            "title": gettext("User notifications"),
            "username": username,
            "found_user": found_user,
            "data": data,
            "preferences": preferences,
            "threads": threads,
            "note": note,
        }
        return self.render(request, "admin/dynamo/user_notifications.html", context)


dynamo_admin.register(UserNotificationsAdmin)

# The mail ledger and notification log pages live with their code; importing them registers them.
import notifications.log.admin_views  # noqa: E402
import notifications.mail.admin_views  # noqa: E402, F401
