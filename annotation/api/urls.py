from django.urls import path
from rest_framework.routers import DefaultRouter

from . import views

router = DefaultRouter()
router.register("projects", views.ProjectViewSet, basename="api-project")

# projects/<slug>/clips/ (GET lists the clips the caller may see, POST ingests) is routed by ingest/urls.py.
urlpatterns = [
    # The caller's API tokens (prefix, scope, expiry) and the token policy.
    path("me/tokens/", views.MyTokens.as_view(), name="api-my-tokens"),
    *router.urls,
]
