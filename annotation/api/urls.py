from django.urls import path
from rest_framework.routers import DefaultRouter

from . import views

router = DefaultRouter()
router.register("projects", views.ProjectViewSet, basename="project")

urlpatterns = [
    path("projects/<slug:slug>/clips/", views.ProjectClipList.as_view(), name="project-clips"),
    *router.urls,
]
