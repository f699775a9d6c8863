"""URL patterns of the assignment capability, included by rescue_annot/urls.py."""

from django.urls import path

from ..views import choose_lead_project
from . import api, views

web_urlpatterns = [  # pages, mounted at /
    path("assignments/", choose_lead_project, {"target": "assignments"}, name="assignment-projects"),
    path("projects/<slug:slug>/assignments/", views.project_assignments, name="assignment-index"),
    path("assignments/<int:assignment_id>/reassign/", views.reassign, name="assignment-reassign"),
]
api_urlpatterns = [  # endpoints, mounted at /api/v1/
    path("projects/<slug:slug>/assignments/", api.ProjectAssignments.as_view(), name="api-project-assignments"),
    path("assignments/<int:assignment_id>/reassign/", api.Reassign.as_view(), name="api-assignment-reassign"),
]
