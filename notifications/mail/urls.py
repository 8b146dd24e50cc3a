from django.urls import path

from notifications.mail import views

urlpatterns = [
    path("mail/unsubscribe/<str:token>/", views.mail_unsubscribe, name="mail-unsubscribe"),
    path("me/email/verify/<str:token>/", views.email_verify_page, name="email-verify"),
    path("me/email/accounts/<str:token>/", views.email_address_accounts, name="email-address-accounts"),
]
