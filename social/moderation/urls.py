from django.urls import path

from social.moderation import views

urlpatterns = [
    path("c/<str:comment_id>/report/", views.comment_report, name="comment-report"),
]
