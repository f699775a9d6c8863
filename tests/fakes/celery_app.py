"""The project's Celery app as the test workers run it (``celery -A tests.fakes.celery_app worker``).

Two additions, both for tests only:

- the pre-annotation tasks are imported explicitly (until the project's
  autodiscovery covers ``annotation.preannotate.celery_tasks``);
- ``TEST_BROKER_VISIBILITY_TIMEOUT`` shortens how long Redis keeps a message
  that a dead worker took but never acknowledged (default: one hour), so a
  test can watch it being delivered again to a restarted worker.
"""

import os

from rescue_annot.celery import app

app.conf.imports = (*tuple(app.conf.imports or ()), "annotation.preannotate.celery_tasks")
_visibility = os.environ.get("TEST_BROKER_VISIBILITY_TIMEOUT")
if _visibility:
    app.conf.broker_transport_options = {
        "visibility_timeout": float(_visibility),
        "unacked_restore_interval": 1,
        "unacked_restore_throttle": 1,
    }

__all__ = ["app"]
