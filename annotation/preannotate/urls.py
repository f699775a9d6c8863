"""URL patterns of the preannotate capability, included by rescue_annot/urls.py."""

from django.urls import path

from . import api, views

web_urlpatterns: list = [  # pages, mounted at /
    path("projects/<slug:slug>/preannotation/", views.batch_page, name="preannotate-batch"),
    path("projects/<slug:slug>/preannotation/start", views.start, name="preannotate-start"),
    path("preannotation/jobs/<int:job_id>/retry", views.retry, name="preannotate-retry"),
]
api_urlpatterns: list = [  # endpoints, mounted at /api/v1/
    path("projects/<slug:slug>/preannotation/", api.ProjectPreannotation.as_view(), name="api-preannotate-project"),
    path("preannotation/batches/<int:batch_id>/", api.BatchDetail.as_view(), name="api-preannotate-batch"),
    path("preannotation/jobs/<int:job_id>/retry/", api.RetryJob.as_view(), name="api-preannotate-retry"),
]
