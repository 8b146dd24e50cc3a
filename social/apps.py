from django.apps import AppConfig


class SocialConfig(AppConfig):
    name = "social"
    verbose_name = "Social"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from social.activity import signals
        from social.drafts import like_kept_hand_over

        signals.connect()
        user_logged_in.connect(like_kept_hand_over, dispatch_uid="like_kept_hand_over")
