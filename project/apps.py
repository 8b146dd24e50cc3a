from django.apps import AppConfig


class ProjectConfig(AppConfig):
    name = "project"
    verbose_name = "Project"

    def ready(self):
        from project.metrics import metrics_install

        metrics_install()
