"""URL patterns of the project's guidance, included by rescue_annot/urls.py."""

from django.urls import path

from . import api, views

web_urlpatterns = [
    path("projects/<slug:slug>/guide/", views.guide, name="codebook-guide"),
    path("projects/<slug:slug>/guidance/", views.guidance, name="codebook-guidance"),
]
api_urlpatterns = [
    path("projects/<slug:slug>/guidance/", api.ProjectGuidance.as_view(), name="api-guidance"),
    path(
        "projects/<slug:slug>/guidance/versions/<int:number>/",
        api.GuidanceVersionDetail.as_view(),
        name="api-guidance-version",
    ),
]
