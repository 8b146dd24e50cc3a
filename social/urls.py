from django.contrib.auth import views as auth_views
from django.urls import path

from social import views
from social.activity.views import my_activity

urlpatterns = [
    path("", views.timeline, name="timeline"),
    path("popular/", views.popular, name="popular"),
    path("me/activity/", my_activity, name="my-activity"),
    path("c/<str:comment_id>/", views.comment_detail, name="comment"),
    path("c/<str:comment_id>/like/", views.comment_like, name="comment-like"),
    path("accounts/signup/", views.signup, name="signup"),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
]
