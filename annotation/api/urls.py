from django.urls import path
from rest_framework.routers import DefaultRouter

from ..ingest.api import ProjectClipsView
from . import views

router = DefaultRouter()
router.register("projects", views.ProjectViewSet, basename="api-project")

urlpatterns = [
    # GET lists the clips the caller may see; POST (leads) ingests transcripts.
    path("projects/<slug:slug>/clips/", ProjectClipsView.as_view(), name="project-clips"),
    # The caller's API tokens (prefix, scope, expiry) and the token policy.
    path("me/tokens/", views.MyTokens.as_view(), name="api-my-tokens"),
    *router.urls,
]
