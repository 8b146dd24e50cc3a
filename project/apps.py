from django.apps import AppConfig


class ProjectConfig(AppConfig):
    name = "project"
    verbose_name = "Project"

    def ready(self) -> None:
        from project import checks  # noqa: F401  (registers the system checks of the limits)
        from project.metrics import metrics_install

        metrics_install()
