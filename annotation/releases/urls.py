"""URL patterns of the releases capability, included by rescue_annot/urls.py.

``diff``, ``preview``, ``freeze`` and ``jobs`` come before ``<version>`` and cannot be version names
(``freeze.RESERVED_VERSIONS``).
"""

from django.urls import path

from . import api, views

web_urlpatterns: list = [  # pages, mounted at /
    path("projects/<slug:slug>/releases/", views.release_list, name="releases-list"),
    path("projects/<slug:slug>/releases/preview/", views.freeze_preview, name="releases-preview"),
    path("projects/<slug:slug>/releases/freeze/", views.start_freeze, name="releases-freeze"),
    path("projects/<slug:slug>/releases/diff/", views.release_diff, name="releases-diff"),
    path("projects/<slug:slug>/releases/<str:version>/", views.release_detail, name="releases-detail"),
    path("projects/<slug:slug>/releases/<str:version>/download/", views.release_download, name="releases-download"),
    path("projects/<slug:slug>/releases/<str:version>/files/<path:name>", views.release_file, name="releases-file"),
]
api_urlpatterns: list = [  # endpoints, mounted at /api/v1/
    path("projects/<slug:slug>/releases/", api.ReleaseList.as_view(), name="api-releases"),
    path("projects/<slug:slug>/releases/diff/", api.ReleaseDiff.as_view(), name="api-release-diff"),
    path("projects/<slug:slug>/releases/preview/", api.FreezePreviewView.as_view(), name="api-release-preview"),
    path("projects/<slug:slug>/releases/jobs/<int:job_id>/", api.FreezeJobStatus.as_view(), name="api-release-job"),
    path("projects/<slug:slug>/releases/<str:version>/", api.ReleaseDetail.as_view(), name="api-release"),
    path(
        "projects/<slug:slug>/releases/<str:version>/download/",
        api.ReleaseDownload.as_view(),
        name="api-release-download",
    ),
]
