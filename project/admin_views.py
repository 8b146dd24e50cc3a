"""Admin pages: every DynamoDB table's status, approximate item count and drift; and System,
each polling worker's heartbeat, backlog and lag."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.template.response import TemplateResponse
from django.urls import path

from project.admin_pages import AdminPage, dynamo_admin
from project.dynamo import tables_check
from project.health_selectors import worker_statuses

if TYPE_CHECKING:
    from django.contrib.admin import AdminSite
    from django.http import HttpRequest
    from django.urls import URLPattern, URLResolver

PAGES = [AdminPage("Tables", "dynamo-tables"), AdminPage("System", "dynamo-system")]


def urls(site: AdminSite) -> list[URLPattern | URLResolver]:
    def tables(request: HttpRequest) -> TemplateResponse:
        context = {
            **site.each_context(request),
            "title": "DynamoDB tables",
            "reports": tables_check(),
        }
        return TemplateResponse(request, "admin/dynamo/tables.html", context)

    def system(request: HttpRequest) -> TemplateResponse:
        statuses = worker_statuses()
        context = {
            **site.each_context(request),
            "title": "System: workers",
            "statuses": statuses,
            "problems": sum(not status.healthy for status in statuses),
            "stale_seconds": settings.WORKER_STALE_SECONDS,
        }
        return TemplateResponse(request, "admin/dynamo/system.html", context)

    return [
        path("tables/", site.admin_view(tables), name="dynamo-tables"),
        path("system/", site.admin_view(system), name="dynamo-system"),
    ]


dynamo_admin.register(pages=PAGES, urls=urls)
