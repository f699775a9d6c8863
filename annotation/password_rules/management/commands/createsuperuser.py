import os

from django.contrib.auth.management.commands import createsuperuser
from django.core.management.base import CommandError

from annotation.services import ServiceError, check_password_rules


class Command(createsuperuser.Command):
    help = createsuperuser.Command.help + " The password must pass AUTH_PASSWORD_VALIDATORS, with --noinput too."

    def handle(self, *args, **options):
        password = os.environ.get("DJANGO_SUPERUSER_PASSWORD")
        if not options["interactive"] and password:
            field = self.UserModel.USERNAME_FIELD
            username = options.get(field) or os.environ.get(f"DJANGO_SUPERUSER_{field.upper()}", "")
            email = options.get("email") or os.environ.get("DJANGO_SUPERUSER_EMAIL", "")
            # An unsaved user, so that the similarity rule compares the password with the name and address.
            candidate = self.UserModel(**{field: username, "email": email})
            try:
                check_password_rules(password, candidate)
            except ServiceError as exc:
                raise CommandError(f"{exc}; nothing was created") from None
        return super().handle(*args, **options)
