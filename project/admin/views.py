"""Admin pages: every DynamoDB table's status, approximate item count and drift; and System,
each polling worker's heartbeat, backlog and lag, and what each route cost in DynamoDB over
the last hour and day."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from django.conf import settings
from django.urls import path
from django.utils.translation import gettext, gettext_noop

from project.admin.pages import AdminPage, DynamoAdmin, dynamo_admin
from project.clock import clock
from project.dynamo.schema.check import tables_check
from project.operations.health_selectors import worker_statuses
from project.operations.usage_selectors import usage_summary

if TYPE_CHECKING:
    from django.http import HttpRequest
    from django.template.response import TemplateResponse
    from django.urls import URLPattern, URLResolver


logger = logging.getLogger(__name__)


class SystemAdmin(DynamoAdmin):
    pages = [AdminPage(gettext_noop("Tables"), "dynamo-tables"), AdminPage(gettext_noop("System"), "dynamo-system")]

    def get_urls(self) -> list[URLPattern | URLResolver]:
        wrap = self.admin_site.admin_view
        return [
            path("tables/", wrap(self.tables_view), name="dynamo-tables"),
            path("system/", wrap(self.system_view), name="dynamo-system"),
        ]

    def tables_view(self, request: HttpRequest) -> TemplateResponse:
        context = {"title": gettext("DynamoDB tables"), "reports": tables_check()}
        return self.render(request, "admin/dynamo/tables.html", context)

    def system_view(self, request: HttpRequest) -> TemplateResponse:
        statuses = worker_statuses()
        try:
            usage = usage_summary(now=clock.now())
        except Exception as error:  # the workers' table still shows
            logger.warning("admin System page: reading the usage tallies failed (%s)", type(error).__name__)
            usage = None
        context = {
            "title": gettext("System: workers"),
            "statuses": statuses,
            "problems": sum(not status.healthy for status in statuses),
            "stale_seconds": settings.WORKER_STALE_SECONDS,
            "usage": usage,
            "usage_enabled": settings.USAGE_ENABLED,
            "price_reads": settings.DYNAMODB_PRICE_PER_MILLION_READS,
            "price_writes": settings.DYNAMODB_PRICE_PER_MILLION_WRITES,
        }
        return self.render(request, "admin/dynamo/system.html", context)


dynamo_admin.register(SystemAdmin)
