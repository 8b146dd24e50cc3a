"""The admin site, with a "DynamoDB" section for data that has no ORM model.

Each installed app may have an `admin_views` module that registers its pages (a
`project.admin.pages.DynamoAdmin`) with `dynamo_admin` (found by `autodiscover_modules`,
see there). Views build their context over `site.each_context(request)` and their
templates extend `admin/base_site.html`. No fake ORM models.

The admin log-in is the site's two-step one (project/identity/two_factor/views.py): an account with
two-factor on types its code at `login/code/`; with TOTP_REQUIRED_FOR_STAFF no admin page
opens to staff whose session did not log in with a code.
"""

from __future__ import annotations

from functools import update_wrapper
from typing import TYPE_CHECKING, Any, TypeVar, cast

from django.contrib import admin
from django.contrib.admin.apps import AdminConfig
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.http import HttpResponseRedirect
from django.urls import include, path, reverse
from django.utils.module_loading import autodiscover_modules
from django.utils.translation import gettext, gettext_lazy
from django.views.decorators.cache import never_cache

from project.admin.pages import AdminPage, dynamo_admin

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.http import HttpRequest, HttpResponse
    from django.urls import URLPattern, URLResolver


_View = TypeVar("_View", bound="Callable[..., Any]")


class SocialAdminSite(admin.AdminSite):
    site_header = gettext_lazy("Dynamo Social administration")
    site_title = gettext_lazy("Dynamo Social admin")
    index_title = gettext_lazy("Administration")

    def get_urls(self) -> list[URLResolver | URLPattern]:
        return [
            path("dynamo/", include(dynamo_admin.urls(self))),
            path("login/code/", self.login_code, name="login_code"),
            *super().get_urls(),
        ]

    def login(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        """Django's admin log-in, with the code step for accounts with two-factor on."""
        from project.identity.two_factor.views import LoginView, TwoStepAdminAuthenticationForm

        if request.method == "GET" and self.has_permission(request):
            return HttpResponseRedirect(reverse("admin:index", current_app=self.name))
        context = {
            **self.each_context(request),
            "title": gettext("Log in"),
            "subtitle": None,
            "app_path": request.get_full_path(),
            "username": request.user.get_username(),
        }
        if REDIRECT_FIELD_NAME not in request.GET and REDIRECT_FIELD_NAME not in request.POST:
            context[REDIRECT_FIELD_NAME] = reverse("admin:index", current_app=self.name)
        context.update(extra_context or {})
        request.current_app = self.name
        view = LoginView.as_view(
            extra_context=context,
            authentication_form=TwoStepAdminAuthenticationForm,
            template_name="admin/login.html",
            code_url_name="admin:login_code",
            next_page=reverse("admin:index", current_app=self.name),
        )
        return cast("HttpResponse", never_cache(view)(request))

    def login_code(self, request: HttpRequest) -> HttpResponse:
        from project.identity.two_factor.views import login_code

        context = {**self.each_context(request), "title": gettext("Your code")}
        return login_code(
            request, template_name="admin/login_code.html", login_url_name="admin:login", extra_context=context
        )

    def admin_view(self, view: _View, cacheable: bool = False) -> _View:
        """Django's staff check, then (TOTP_REQUIRED_FOR_STAFF) the two-factor gate; log-out stays open."""
        from project.identity.two_factor.views import staff_second_factor_gate

        inner = super().admin_view(view, cacheable)
        if getattr(view, "__name__", "") == "logout":
            return inner

        def gated(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
            if request.user.is_authenticated:
                refused = staff_second_factor_gate(request, login_url=reverse("admin:login", current_app=self.name))
                if refused is not None:
                    return refused
            return inner(request, *args, **kwargs)

        return cast("_View", update_wrapper(gated, inner))

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
                            "name": gettext(page.title),  # marked with gettext_noop where the page is declared
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
    default_site = "project.admin.site.SocialAdminSite"

    def ready(self) -> None:
        super().ready()
        import project.admin.views  # noqa: F401  (the project's own pages: tables, System)

        autodiscover_modules("admin_views")


admin_site = admin.site
