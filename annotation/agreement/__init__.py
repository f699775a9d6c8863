"""Inter-annotator agreement: Krippendorff's alpha per field, with Krippendorff's bootstrap.

Callers import what they need from the module where it lives; this package file defines nothing, so that
importing the package needs neither the app registry nor the embedding model, and no entry point has a second
definition here forwarding to the real one.

- ``report.compute_project_report(project, *, scenario=None, clips=None, resamples=1000, seed=0,
  work_scope="submitted") -> dict``: the label report, computed in place. Only coded work counts: by default
  revisions of submitted assignments (``scope``), which is what a release reports.
- ``services.compute_release_reports(project, *, clips, resamples=1000, seed=0) -> (dict, dict | Exception)``:
  the label report and the free-text fields' agreement (``semantic``, its maths in ``embedding_alpha``) of a
  release's clips, from one reading of the data, stored (the release exporter calls it).
"""
