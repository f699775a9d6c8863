"""URL patterns of the audit-trail capability, included by rescue_annot/urls.py."""

from django.urls import path

from . import api, views

web_urlpatterns = [  # pages, mounted at /
    path("projects/<slug:slug>/history/", views.project_history, name="audit-trail"),
]
api_urlpatterns = [  # endpoints, mounted at /api/v1/
    path("projects/<slug:slug>/history/", api.ProjectHistoryView.as_view(), name="api-audit-trail"),
]
