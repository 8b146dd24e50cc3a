"""The "DynamoDB" admin section's registry: each app's `admin_views` module registers its pages.

An app's pages are a `DynamoAdmin` subclass, built like Django's `ModelAdmin`: each view is a
method, `get_urls()` lists them wrapped in `self.admin_site.admin_view(...)` (staff only), and
`pages` links them on the admin index. The module ends with

    dynamo_admin.register(DeliveryAdmin)

and `ProjectAdminConfig.ready()` imports every such module with Django's `autodiscover_modules`,
as the admin does with `admin.py`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.template.response import TemplateResponse

if TYPE_CHECKING:
    from django.contrib.admin import AdminSite
    from django.http import HttpRequest
    from django.urls import URLPattern, URLResolver


@dataclass(frozen=True)
class AdminPage:
    title: str  # English, marked with gettext_noop; the admin index shows it translated
    url_name: str  # resolved inside the admin namespace
    add_url_name: str | None = None  # the page that creates one, linked as "Add" on the admin index


class DynamoAdmin:
    """One app's admin pages for DynamoDB data (no ORM model behind them)."""

    pages: list[AdminPage] = []

    def __init__(self, admin_site: AdminSite) -> None:
        self.admin_site = admin_site

    def get_urls(self) -> list[URLPattern | URLResolver]:
        raise NotImplementedError

    def render(self, request: HttpRequest, template_name: str, context: dict[str, Any]) -> TemplateResponse:
        """The page in the admin's frame: `context` over the site's (`title`, nav, user links)."""
        return TemplateResponse(request, template_name, {**self.admin_site.each_context(request), **context})


class DynamoAdminRegistry:
    def __init__(self) -> None:
        self._entries: dict[str, type[DynamoAdmin]] = {}

    def register(self, admin_class: type[DynamoAdmin]) -> type[DynamoAdmin]:
        """Register an app's pages (again: replaced, so a re-import is harmless)."""
        self._entries[f"{admin_class.__module__}.{admin_class.__qualname__}"] = admin_class
        return admin_class

    def pages(self) -> list[AdminPage]:
        return [page for admin_class in self._entries.values() for page in admin_class.pages]

    def urls(self, site: AdminSite) -> list[URLPattern | URLResolver]:
        return [pattern for admin_class in self._entries.values() for pattern in admin_class(site).get_urls()]


dynamo_admin = DynamoAdminRegistry()
