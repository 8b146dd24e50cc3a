from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from project.admin.site import admin_site
from project.operations.metrics import metrics_view

urlpatterns = [
    path("admin/", admin_site.urls),
    path("metrics", metrics_view, name="metrics"),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves Swagger UI's settings as a script file: no inline script (CSP).
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("api/", include("social.api_urls")),
    path("api/", include("social.moderation.api_urls")),
    path("api/", include("notifications.api_urls")),
    path("api/", include("delivery.api_urls")),
    path("", include("notifications.urls")),
    path("", include("notifications.mail.urls")),
    path("", include("social.urls")),
    path("", include("social.moderation.urls")),
]

handler400 = "project.http.views.bad_request"
handler403 = "project.http.views.permission_denied"
handler404 = "project.http.views.page_not_found"
handler500 = "project.http.views.server_error"
