"""URL patterns of the ingest capability, included by rescue_annot/urls.py."""

from django.urls import path

from . import api, views

web_urlpatterns = [  # pages, mounted at /
    path("projects/<slug:slug>/ingest/", views.upload, name="ingest-upload"),
    path("projects/<slug:slug>/ingest/accept-speakers/", views.accept_speakers, name="ingest-accept-speakers"),
    path("projects/<slug:slug>/clips/<int:clip_id>/speakers/", views.speaker_map, name="ingest-speakers"),
]
api_urlpatterns = [  # endpoints, mounted at /api/v1/
    # GET lists the clips the caller may see (api.views.ProjectClipList); POST (leads) ingests transcripts.
    path("projects/<slug:slug>/clips/", api.ProjectClipsView.as_view(), name="project-clips"),
    path(
        "projects/<slug:slug>/clips/<int:clip_id>/speaker-map/",
        api.ClipSpeakerMapView.as_view(),
        name="ingest-speaker-map",
    ),
]
