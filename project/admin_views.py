"""Admin page: every DynamoDB table's status, approximate item count and drift."""

from django.template.response import TemplateResponse
from django.urls import path

from project.admin_pages import AdminPage, dynamo_admin
from project.dynamo import tables_check

PAGES = [AdminPage("Tables", "dynamo-tables")]


def urls(site):
    def tables(request):
        context = {
            **site.each_context(request),
            "title": "DynamoDB tables",
            "reports": tables_check(),
        }
        return TemplateResponse(request, "admin/dynamo/tables.html", context)

    return [path("tables/", site.admin_view(tables), name="dynamo-tables")]


dynamo_admin.register(pages=PAGES, urls=urls)
