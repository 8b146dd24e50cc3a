from django.apps import AppConfig


class SocialConfig(AppConfig):
    name = "social"
    verbose_name = "Social"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in

        from social.activity import signals
        from social.drafts import like_kept_hand_over
        from social.moderation.signals import moderation_decided
        from social.spam.levels import trust_on_decision
        from social.spam.visits import trust_on_login

        signals.connect()
        user_logged_in.connect(like_kept_hand_over, dispatch_uid="like_kept_hand_over")
        user_logged_in.connect(trust_on_login, dispatch_uid="trust_on_login")
        moderation_decided.connect(trust_on_decision, dispatch_uid="trust_on_decision")
