"""API views: thin; scoping comes from selectors."""
from django.shortcuts import get_object_or_404
from rest_framework import generics, viewsets

from .. import selectors
from .serializers import ClipSerializer, ProjectSerializer


class ProjectViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = ProjectSerializer
    lookup_field = "slug"

    def get_queryset(self):
        return selectors.visible_projects(self.request.user)


class ProjectClipList(generics.ListAPIView):
    """Clips of a project that the caller may see."""

    serializer_class = ClipSerializer

    def get_queryset(self):
        project = get_object_or_404(selectors.visible_projects(self.request.user), slug=self.kwargs["slug"])
        return selectors.visible_clips(self.request.user, project).order_by("sample_id")
