from django.urls import path

from notifications import feed_apis

urlpatterns = [
    path("feed/", feed_apis.FeedListApi.as_view(), name="api-feed"),
]
