"""WSGI entry point (gunicorn rescue_annot.wsgi)."""
import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rescue_annot.settings")
application = get_wsgi_application()
