"""The "DynamoDB" admin section's registry: each app's `admin_views` module registers its pages.

An installed app's `admin_views` module ends with

    dynamo_admin.register(pages=PAGES, urls=urls)

(`PAGES: list[AdminPage]` links on the admin index, `urls(site)` the views wrapped in
`site.admin_view(...)`), and `ProjectAdminConfig.ready()` imports every such module with
Django's `autodiscover_modules`, as the admin does with `admin.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from django.contrib.admin import AdminSite
    from django.urls import URLPattern, URLResolver


# A module's URL list for the admin site: its views wrapped in `site.admin_view(...)`.
UrlFactory = Callable[["AdminSite"], list["URLPattern | URLResolver"]]


@dataclass(frozen=True)
class AdminPage:
    title: str
    url_name: str  # resolved inside the admin namespace
    add_url_name: str | None = None  # the page that creates one, linked as "Add" on the admin index


class DynamoAdminRegistry:
    def __init__(self) -> None:
        self._entries: dict[str, tuple[list[AdminPage], UrlFactory]] = {}

    def register(self, *, pages: list[AdminPage], urls: UrlFactory) -> None:
        """Register a module's pages and URL factory (again: replaced, so a re-import is harmless)."""
        self._entries[urls.__module__] = (list(pages), urls)

    def pages(self) -> list[AdminPage]:
        return [page for pages, _ in self._entries.values() for page in pages]

    def urls(self, site: AdminSite) -> list[URLPattern | URLResolver]:
        return [pattern for _, urls in self._entries.values() for pattern in urls(site)]


dynamo_admin = DynamoAdminRegistry()
