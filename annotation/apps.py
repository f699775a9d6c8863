from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation workflow"

    def ready(self):
        from .audit import fit_change_reasons, protect_history

        # Every app's models are loaded by now, so every historical model is guarded.
        protect_history()
        # A long change reason (a file name, a discard reason) is cut to its column, not a failed write.
        fit_change_reasons()
