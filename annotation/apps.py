from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation workflow"

    def ready(self):
        from .audit import protect_history

        # Every app's models are loaded by now, so every historical model is guarded.
        protect_history()
