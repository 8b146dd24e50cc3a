from django.urls import path

from notifications import apis
from notifications.feed import apis as feed_apis
from notifications.log import views as log_views
from notifications.preferences import apis as preferences_apis
from notifications.push import apis as push_apis

urlpatterns = [
    path("notifications/", apis.NotificationListApi.as_view(), name="api-notifications"),
    path(
        "notifications/unread-count/",
        apis.NotificationUnreadCountApi.as_view(),
        name="api-notifications-unread-count",
    ),
    path("notifications/read/", apis.NotificationReadApi.as_view(), name="api-notifications-read"),
    path("notifications/read-all/", apis.NotificationReadAllApi.as_view(), name="api-notifications-read-all"),
    path("live/", apis.LiveApi.as_view(), name="api-live"),
    path("feed/", feed_apis.FeedListApi.as_view(), name="api-feed"),
    path("me/preferences/", preferences_apis.PreferencesApi.as_view(), name="api-preferences"),
    path("me/notification-log/", log_views.NotificationLogApi.as_view(), name="api-notification-log"),
    path("push/key/", push_apis.PushKeyApi.as_view(), name="api-push-key"),
    path("push/read/", push_apis.PushReadApi.as_view(), name="api-push-read"),
    path("me/push-subscriptions/", push_apis.PushSubscriptionListApi.as_view(), name="api-push-subscriptions"),
    path(
        "me/push-subscriptions/<str:subscription_id>/",
        push_apis.PushSubscriptionDetailApi.as_view(),
        name="api-push-subscription",
    ),
    path("comments/<str:comment_id>/mute/", preferences_apis.CommentMuteApi.as_view(), name="api-comment-mute"),
    path("comments/<str:comment_id>/watch/", preferences_apis.CommentWatchApi.as_view(), name="api-comment-watch"),
]
