"""Admin pages: every DynamoDB table's status, approximate item count and drift; and System,
each polling worker's heartbeat, backlog and lag."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.urls import path

from project.admin_pages import AdminPage, DynamoAdmin, dynamo_admin
from project.dynamo import tables_check
from project.health_selectors import worker_statuses

if TYPE_CHECKING:
    from django.http import HttpRequest
    from django.template.response import TemplateResponse
    from django.urls import URLPattern, URLResolver


class SystemAdmin(DynamoAdmin):
    pages = [AdminPage("Tables", "dynamo-tables"), AdminPage("System", "dynamo-system")]

    def get_urls(self) -> list[URLPattern | URLResolver]:
        wrap = self.admin_site.admin_view
        return [
            path("tables/", wrap(self.tables_view), name="dynamo-tables"),
            path("system/", wrap(self.system_view), name="dynamo-system"),
        ]

    def tables_view(self, request: HttpRequest) -> TemplateResponse:
        context = {"title": "DynamoDB tables", "reports": tables_check()}
        return self.render(request, "admin/dynamo/tables.html", context)

    def system_view(self, request: HttpRequest) -> TemplateResponse:
        statuses = worker_statuses()
        context = {
            "title": "System: workers",
            "statuses": statuses,
            "problems": sum(not status.healthy for status in statuses),
            "stale_seconds": settings.WORKER_STALE_SECONDS,
        }
        return self.render(request, "admin/dynamo/system.html", context)


dynamo_admin.register(SystemAdmin)
