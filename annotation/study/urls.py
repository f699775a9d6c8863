"""URL patterns of the study design, included by rescue_annot/urls.py."""

from django.urls import path

from . import api, views

web_urlpatterns = [path("projects/<slug:slug>/design/", views.design, name="study-design")]
api_urlpatterns = [path("projects/<slug:slug>/design/", api.ProjectDesign.as_view(), name="api-study-design")]
