from django.contrib.auth import views as auth_views
from django.urls import path

from project.identity.two_factor import views as two_factor
from social import views
from social.account.views import LogoutView, account_delete, account_export, account_settings, language_choose
from social.activity.views import my_activity
from social.profiles import views as profile_views
from social.reactions.views import comment_react
from social.relations.views import relation_set, relations_settings

urlpatterns = [
    path("", views.timeline, name="timeline"),
    path("popular/", views.popular, name="popular"),
    path("me/activity/", my_activity, name="my-activity"),
    path("me/settings/", account_settings, name="account-settings"),
    path("language/", language_choose, name="language"),
    path("me/delete/", account_delete, name="account-delete"),
    path("me/export/", account_export, name="account-export"),
    path("me/people/", relations_settings, name="relations"),
    path("u/<str:username>/", profile_views.profile, name="profile"),
    path("u/<str:username>/relation/", relation_set, name="relation-set"),
    path("c/<str:comment_id>/", views.comment_detail, name="comment"),
    path("c/<str:comment_id>/like/", views.comment_like, name="comment-like"),
    path("c/<str:comment_id>/react/", comment_react, name="comment-react"),
    path("c/<str:comment_id>/edit/", views.comment_edit, name="comment-edit"),
    path("c/<str:comment_id>/delete/", views.comment_delete, name="comment-delete"),
    path("accounts/signup/", views.signup, name="signup"),
    path("accounts/login/", two_factor.LoginView.as_view(), name="login"),
    path("accounts/login/code/", two_factor.login_code, name="login-code"),
    path("me/two-factor/", two_factor.two_factor_settings, name="two-factor"),
    path("me/two-factor/remove/", two_factor.two_factor_remove, name="two-factor-remove"),
    path("accounts/logout/", LogoutView.as_view(), name="logout"),
    path("accounts/password/change/", views.PasswordChangeView.as_view(), name="password_change"),
    path("accounts/password/change/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("accounts/password/reset/", views.PasswordResetView.as_view(), name="password_reset"),
    path("accounts/password/reset/sent/", auth_views.PasswordResetDoneView.as_view(), name="password_reset_done"),
    path(
        "accounts/password/reset/<uidb64>/<token>/",
        two_factor.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "accounts/password/reset/complete/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
]
