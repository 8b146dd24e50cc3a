from django.apps import AppConfig


class ProjectConfig(AppConfig):
    name = "project"
    verbose_name = "Project"

    def ready(self) -> None:
        from django.conf import settings
        from django.db.models.signals import post_save

        from project.dynamo import wire
        from project.identity.api_tokens import password_saved_revoke_tokens
        from project.identity.two_factor.services import password_saved_forget_setup
        from project.limits import checks  # noqa: F401  (registers the system checks of the limits)
        from project.operations.metrics import metrics_install
        from project.operations.usage import usage_install

        wire.install()  # DynamoDB's usual calls without botocore's per-call machinery (DYNAMODB_FAST_CALLS)
        metrics_install()
        usage_install()
        post_save.connect(
            password_saved_revoke_tokens, sender=settings.AUTH_USER_MODEL, dispatch_uid="password_saved_revoke_tokens"
        )
        post_save.connect(
            password_saved_forget_setup, sender=settings.AUTH_USER_MODEL, dispatch_uid="password_saved_forget_setup"
        )
