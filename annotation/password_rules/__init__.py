"""Django's ``createsuperuser`` held to the password rules in every mode.

Interactively Django checks AUTH_PASSWORD_VALIDATORS, but with ``--noinput``
it takes ``DJANGO_SUPERUSER_PASSWORD`` as it is: an admin with the password
``a`` could be created in production. This app (listed before
``django.contrib.auth`` so that its command is the one ``manage.py`` runs)
applies the same rules as ``create_user``.
"""
