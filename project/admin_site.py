"""The admin site, with a "DynamoDB" section for data that has no ORM model.

Each table app may have an `admin_views` module exposing

    PAGES: list[AdminPage]          # links on the admin index
    def urls(site) -> list[URLPattern]   # views wrapped in site.admin_view(...)

Views build their context with `site.each_context(request)` and their templates
extend `admin/base_site.html`. No fake ORM models.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.urls import include, path, reverse

from project.dynamo import TABLE_APPS


@dataclass(frozen=True)
class AdminPage:
    title: str
    url_name: str  # resolved inside the admin namespace


def _admin_view_modules():
    modules = [importlib.import_module("project.admin_views")]
    for app in TABLE_APPS:
        try:
            modules.append(importlib.import_module(f"{app}.admin_views"))
        except ModuleNotFoundError as error:
            if error.name != f"{app}.admin_views":
                raise
    return modules


class SocialAdminSite(admin.AdminSite):
    site_header = "Dynamo Social administration"
    site_title = "Dynamo Social admin"
    index_title = "Administration"

    def get_urls(self):
        dynamo_urls = []
        for module in _admin_view_modules():
            dynamo_urls += module.urls(self)
        return [path("dynamo/", include(dynamo_urls)), *super().get_urls()]

    def dynamo_pages(self) -> list[AdminPage]:
        pages = []
        for module in _admin_view_modules():
            pages += module.PAGES
        return pages

    def get_app_list(self, request, app_label=None):
        app_list = super().get_app_list(request, app_label)
        if app_label is None and request.user.is_active and request.user.is_staff:
            app_list.insert(
                0,
                {
                    "name": "DynamoDB",
                    "app_label": "dynamo",
                    "app_url": reverse("admin:dynamo-tables"),
                    "has_module_perms": True,
                    "models": [
                        {
                            "name": page.title,
                            "object_name": page.url_name,
                            "admin_url": reverse(f"admin:{page.url_name}"),
                            "view_only": True,
                            "perms": {"view": True},
                        }
                        for page in self.dynamo_pages()
                    ],
                },
            )
        return app_list


class ProjectAdminConfig(AdminConfig):
    default_site = "project.admin_site.SocialAdminSite"


admin_site = admin.site
