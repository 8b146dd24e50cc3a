from django.urls import path

from notifications import views
from notifications.log import views as log_views
from notifications.preferences import views as preferences_views
from notifications.push import views as push_views

urlpatterns = [
    path("notifications/", views.inbox, name="notifications"),
    path("notifications/read-all/", views.inbox_read_all, name="notifications-read-all"),
    path("push-worker.js", push_views.push_worker, name="push-worker"),
    path("me/notifications/", preferences_views.preferences_page, name="notification-preferences"),
    path("me/notifications/log/", log_views.notification_log_page, name="notification-log"),
    path("me/notifications/threads/", preferences_views.thread_undo, name="notification-thread-undo"),
    path("c/<str:comment_id>/mute/", preferences_views.comment_mute, name="comment-mute"),
    path("c/<str:comment_id>/watch/", preferences_views.comment_watch, name="comment-watch"),
]
