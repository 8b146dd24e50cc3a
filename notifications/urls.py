from django.urls import path

from notifications import views

urlpatterns = [
    path("notifications/", views.inbox, name="notifications"),
    path("notifications/read-all/", views.inbox_read_all, name="notifications-read-all"),
]
