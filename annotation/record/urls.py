"""URL patterns of the annotator's record, included by rescue_annot/urls.py."""

from django.urls import path

from . import api, views

web_urlpatterns = [
    path("projects/<slug:slug>/qualification/", views.qualification, name="record-qualification"),
    path("projects/<slug:slug>/qualification/rounds/<int:attempt_id>/", views.attempt, name="record-attempt"),
    path("projects/<slug:slug>/record/", views.dashboard_page, name="record-dashboard"),
    path("projects/<slug:slug>/record/setup/", views.setup, name="record-setup"),
    path("projects/<slug:slug>/record/coders/<int:user_id>/", views.coder, name="record-coder"),
    path("projects/<slug:slug>/record/coders/<int:user_id>/decide/", views.decide, name="record-decide"),
]
api_urlpatterns = [
    path("projects/<slug:slug>/record/", api.Dashboard.as_view(), name="api-record-dashboard"),
    path("projects/<slug:slug>/record/coders/<int:user_id>/", api.CoderRecord.as_view(), name="api-record-coder"),
    path(
        "projects/<slug:slug>/record/coders/<int:user_id>/decisions/",
        api.Decisions.as_view(),
        name="api-record-decisions",
    ),
]
