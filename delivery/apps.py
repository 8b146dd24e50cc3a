from django.apps import AppConfig


class DeliveryConfig(AppConfig):
    name = "delivery"
    verbose_name = "Delivery"

    def ready(self) -> None:
        from delivery import signals  # noqa: F401  (connects the account-deletion handler)
