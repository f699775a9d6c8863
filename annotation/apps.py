from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation workflow"

    def ready(self):
        from .audit import fit_change_reasons, protect_history
        from .tokens import connect_signals

        # Every app's models are loaded by now, so every historical model is guarded.
        protect_history()
        # A long change reason (a file name, a discard reason) is cut to its column, not a failed write.
        fit_change_reasons()
        # A password change, by any path, revokes the user's API tokens.
        connect_signals()
