"""Inter-annotator agreement: Krippendorff's alpha per field, with Krippendorff's bootstrap.

Public API (the release exporter calls it):
``compute_project_report(project, *, scenario=None, clips=None, resamples=1000, seed=0, work_scope="submitted")
-> dict``. Only coded work counts: by default revisions of submitted assignments (``scope``), which is what
a release reports.
"""


def compute_project_report(
    project, *, scenario=None, clips=None, resamples: int = 1000, seed: int = 0, work_scope: str = "submitted"
) -> dict:
    """The full agreement report of a project as a JSON-ready, deterministic dict (see ``report``)."""
    # Imported here so that importing the package does not need the app registry.
    from .report import compute_project_report as compute

    return compute(project, scenario=scenario, clips=clips, resamples=resamples, seed=seed, work_scope=work_scope)


__all__ = ["compute_project_report"]
