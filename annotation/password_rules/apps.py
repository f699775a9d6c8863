from django.apps import AppConfig


class PasswordRulesConfig(AppConfig):
    """Only management commands that must take precedence over Django's own (listed before django.contrib.auth)."""

    name = "annotation.password_rules"
    label = "password_rules"
