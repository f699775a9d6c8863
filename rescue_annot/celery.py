"""The Celery app. Tasks live in each capability's ``celery_tasks`` module."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "rescue_annot.settings")

app = Celery("rescue_annot")
app.config_from_object("django.conf:settings", namespace="CELERY")
# The project app and each capability package keep their tasks in `celery_tasks`.
app.autodiscover_tasks(
    [
        "annotation",
        "annotation.adjudication",
        "annotation.agreement",
        "annotation.meaning",
        "annotation.preannotate",
        "annotation.record",
        "annotation.releases",
    ],
    related_name="celery_tasks",
)
