"""Admin page "Activity": the daily rollup as a chart (inline SVG, no JS, no CDN) and a table."""

from django.urls import path
from django.utils.translation import gettext_noop, ngettext

from project.admin.pages import AdminPage, DynamoAdmin
from social.activity import selectors

PERIODS = (30, 90)


class ActivityAdmin(DynamoAdmin):
    pages = [AdminPage(gettext_noop("Activity"), "dynamo-activity")]

    def get_urls(self):
        return [path("activity/", self.admin_site.admin_view(self.activity_view), name="dynamo-activity")]

    def activity_view(self, request):
        days = int(request.GET["days"]) if request.GET.get("days") in {str(p) for p in PERIODS} else PERIODS[0]
        context = {
            "title": ngettext("Activity, last %(days)s day", "Activity, last %(days)s days", days) % {"days": days},
            "days": days,
            "periods": PERIODS,
            "chart": selectors.activity_chart(days=days),
            "tables": selectors.activity_tables_status(),
        }
        return self.render(request, "admin/dynamo/activity.html", context)
