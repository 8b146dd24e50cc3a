from django.urls import path

from social import apis
from social.account.apis import MeApi, MyExportApi
from social.activity.apis import ActivityDailyApi
from social.reactions.apis import CommentReactionApi
from social.relations.apis import MyRelationsApi, UserBlockApi, UserMuteApi

urlpatterns = [
    path("users/", apis.UserCreateApi.as_view(), name="api-user-create"),
    path("users/<str:username>/", apis.ProfileApi.as_view(), name="api-profile"),
    path("users/<str:username>/comments/", apis.ProfileCommentsApi.as_view(), name="api-profile-comments"),
    path("users/<str:username>/block/", UserBlockApi.as_view(), name="api-user-block"),
    path("users/<str:username>/mute/", UserMuteApi.as_view(), name="api-user-mute"),
    path("me/", MeApi.as_view(), name="api-me"),
    path("me/export/", MyExportApi.as_view(), name="api-me-export"),
    path("me/relations/", MyRelationsApi.as_view(), name="api-me-relations"),
    path("auth/token/", apis.TokenCreateApi.as_view(), name="api-token"),
    path("comments/", apis.CommentListCreateApi.as_view(), name="api-comments"),
    path("comments/popular/", apis.PopularCommentsApi.as_view(), name="api-comments-popular"),
    path("comments/<str:comment_id>/", apis.CommentDetailApi.as_view(), name="api-comment"),
    path("comments/<str:comment_id>/replies/", apis.CommentRepliesApi.as_view(), name="api-comment-replies"),
    path("comments/<str:comment_id>/like/", apis.CommentLikeApi.as_view(), name="api-comment-like"),
    path(
        "comments/<str:comment_id>/reactions/<str:name>/",
        CommentReactionApi.as_view(),
        name="api-comment-reaction",
    ),
    path("activity/daily/", ActivityDailyApi.as_view(), name="api-activity-daily"),
]
