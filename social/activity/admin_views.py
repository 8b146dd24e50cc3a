"""Admin page "Activity": the daily rollup as a chart (inline SVG, no JS, no CDN) and a table."""

from django.template.response import TemplateResponse
from django.urls import path

from project.admin_pages import AdminPage
from social.activity import selectors

PAGES = [AdminPage("Activity", "dynamo-activity")]
PERIODS = (30, 90)


def urls(site):
    def activity(request):
        days = int(request.GET["days"]) if request.GET.get("days") in {str(p) for p in PERIODS} else PERIODS[0]
        context = {
            **site.each_context(request),
            "title": f"Activity, last {days} days",
            "days": days,
            "periods": PERIODS,
            "chart": selectors.activity_chart(days=days),
            "tables": selectors.activity_tables_status(),
        }
        return TemplateResponse(request, "admin/dynamo/activity.html", context)

    return [path("activity/", site.admin_view(activity), name="dynamo-activity")]
