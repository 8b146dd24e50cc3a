from django.apps import AppConfig


class ProjectConfig(AppConfig):
    name = "project"
    verbose_name = "Project"

    def ready(self) -> None:
        from django.conf import settings
        from django.contrib.auth.signals import user_logged_in
        from django.db.models.signals import post_save

        from project import checks  # noqa: F401  (registers the system checks of the limits)
        from project.api_tokens import password_saved_revoke_tokens
        from project.drafts import like_kept_hand_over
        from project.metrics import metrics_install
        from project.usage import usage_install

        metrics_install()
        usage_install()
        post_save.connect(
            password_saved_revoke_tokens, sender=settings.AUTH_USER_MODEL, dispatch_uid="password_saved_revoke_tokens"
        )
        user_logged_in.connect(like_kept_hand_over, dispatch_uid="like_kept_hand_over")
