from django.apps import AppConfig


class NotificationsConfig(AppConfig):
    name = "notifications"
    verbose_name = "Notifications"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_out
        from django.utils.module_loading import autodiscover_modules

        from notifications import checks  # noqa: F401  (registers the system checks)
        from notifications.login_notices import login_failures_notice
        from notifications.mail.account import second_factor_changed_mail
        from notifications.moderation_notices import moderation_notice, moderation_notice_promise
        from notifications.preferences import signals  # noqa: F401  (forgets a deleted account's choices)
        from notifications.push.signals import push_logged_out
        from project.identity.login_limits import login_failures_noticed
        from project.identity.two_factor.services import second_factor_changed
        from social.moderation.signals import moderation_decided, moderation_deciding

        login_failures_noticed.connect(login_failures_notice, dispatch_uid="login_failures_notice")
        second_factor_changed.connect(second_factor_changed_mail, dispatch_uid="second_factor_changed_mail")
        moderation_deciding.connect(moderation_notice_promise, dispatch_uid="moderation_notice_promise")
        moderation_decided.connect(moderation_notice, dispatch_uid="moderation_notice")
        user_logged_out.connect(push_logged_out, dispatch_uid="push_logged_out")

        autodiscover_modules("feed_sources")  # where entries of other apps' kinds read their text
