"""A URL configuration with one view that fails, for the tests of the 500 page (tests/test_security.py)."""

from django.urls import path

from rescue_annot.urls import urlpatterns as project_urlpatterns


def fail(request):
    raise RuntimeError("a bug the demo must not show to annotators: SECRET_SETTING_VALUE")


urlpatterns = [path("fail/", fail), *project_urlpatterns]
