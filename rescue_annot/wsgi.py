"""WSGI entry point (gunicorn rescue_annot.wsgi)."""

import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rescue_annot.settings")
application = get_wsgi_application()

# Load the URL configuration, and with it every view, serializer and the
# libraries they import, while the process starts rather than in the first
# request it serves: that request took about 2 s. With gunicorn --preload
# this happens once, in the master, and every worker is forked warm.
get_resolver().url_patterns  # noqa: B018 (evaluated for the imports it makes)
