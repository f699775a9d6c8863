"""Frozen benchmark releases.

``freeze`` builds a release from the adjudicated gold (data files, the six
task instance sets from ``tasks``, ``stats``, the agreement report, the
dataset ``card``, ``croissant`` metadata, ``figures``) and writes it through
``manifest`` as a read-only, checksummed folder with a ``Release`` record;
``groups`` says which clips show the same people and ``splits`` decides
train/validation/test by those groups; ``preview`` is the dry run a lead sees
before freezing; ``diff`` compares two releases; ``evaluate`` scores
predictions against one.
``services`` / ``celery_tasks`` run a freeze on a worker for the pages
(``views``) and the API (``api``); ``selectors`` keep all of it to leads.
"""
