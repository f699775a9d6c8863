"""URL patterns of the annotator's workspace, included by rescue_annot/urls.py."""

from django.urls import path

from . import api, views

web_urlpatterns = [
    path("work/", views.queue, name="workspace-queue"),
    path("work/clips/<int:clip_id>/", views.clip_view, name="workspace-clip"),
    path("work/clips/<int:clip_id>/media", views.clip_media, name="workspace-media"),
]
api_urlpatterns = [
    path("assignments/", api.MyAssignments.as_view(), name="api-my-assignments"),
    path("assignments/<int:assignment_id>/submit/", api.AssignmentSubmit.as_view(), name="api-assignment-submit"),
    path("clips/<int:clip_id>/workspace/", api.ClipWorkspace.as_view(), name="api-clip-workspace"),
    path("clips/<int:clip_id>/comments/", api.ClipComments.as_view(), name="api-clip-comments"),
    path("revisions/<int:revision_id>/", api.RevisionDetail.as_view(), name="api-revision"),
    path("revisions/<int:revision_id>/validate/", api.RevisionValidate.as_view(), name="api-revision-validate"),
    path("revisions/<int:revision_id>/review/", api.RevisionReview.as_view(), name="api-revision-review"),
    path("me/workspace-settings/", api.MySettings.as_view(), name="api-my-settings"),
]
