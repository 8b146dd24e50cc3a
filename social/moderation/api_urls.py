from django.urls import path

from social.moderation import apis

urlpatterns = [
    path("comments/<str:comment_id>/report/", apis.CommentReportApi.as_view(), name="api-comment-report"),
    path("moderation/reports/", apis.ModerationReportsApi.as_view(), name="api-moderation-reports"),
    path("moderation/held/", apis.ModerationHeldApi.as_view(), name="api-moderation-held"),
    path("moderation/held/decide/", apis.ModerationHeldDecideApi.as_view(), name="api-moderation-held-decide"),
    path("moderation/users/<str:user_id>/spam/", apis.ModerationSpamApi.as_view(), name="api-moderation-spam"),
]
