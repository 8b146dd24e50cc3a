from django.urls import path

from notifications.mail import views

urlpatterns = [
    path("mail/unsubscribe/<str:token>/", views.mail_unsubscribe, name="mail-unsubscribe"),
    path("me/email/verify/<str:token>/", views.email_verify_page, name="email-verify"),
]
