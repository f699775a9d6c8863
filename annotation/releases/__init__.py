"""Frozen benchmark releases.

``freeze`` builds a release from the adjudicated gold (data files, the six
task instance sets from ``tasks``, ``stats``, the agreement report, the
dataset ``card``, ``croissant`` metadata, ``figures``) and writes it through
``manifest`` as a read-only, checksummed folder with a ``Release`` record;
``splits`` decides train/validation/test by relationship group; ``diff``
compares two releases; ``evaluate`` scores predictions against one.
``services`` / ``celery_tasks`` run a freeze on a worker for the pages
(``views``) and the API (``api``); ``selectors`` keep all of it to leads.
"""
