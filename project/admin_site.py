"""The admin site, with a "DynamoDB" section for data that has no ORM model.

Each installed app may have an `admin_views` module that registers its pages (a
`project.admin_pages.DynamoAdmin`) with `dynamo_admin` (found by `autodiscover_modules`,
see there). Views build their context over `site.each_context(request)` and their
templates extend `admin/base_site.html`. No fake ORM models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.urls import include, path, reverse
from django.utils.module_loading import autodiscover_modules

from project.admin_pages import AdminPage, dynamo_admin

if TYPE_CHECKING:
    from django.http import HttpRequest
    from django.urls import URLPattern, URLResolver


class SocialAdminSite(admin.AdminSite):
    site_header = "Dynamo Social administration"
    site_title = "Dynamo Social admin"
    index_title = "Administration"

    def get_urls(self) -> list[URLResolver | URLPattern]:
        return [path("dynamo/", include(dynamo_admin.urls(self))), *super().get_urls()]

    def dynamo_pages(self) -> list[AdminPage]:
        return dynamo_admin.pages()

    def get_app_list(self, request: HttpRequest, app_label: str | None = None) -> list[Any]:
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
                            "add_url": reverse(f"admin:{page.add_url_name}") if page.add_url_name else None,
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

    def ready(self) -> None:
        super().ready()
        autodiscover_modules("admin_views")


admin_site = admin.site
