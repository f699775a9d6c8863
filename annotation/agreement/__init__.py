"""Inter-annotator agreement: Krippendorff's alpha per field, with Krippendorff's bootstrap.

Public API (the release exporter calls it):
``compute_project_report(project, *, scenario=None, clips=None, resamples=1000, seed=0, work_scope="submitted")
-> dict``. Only coded work counts: by default revisions of submitted assignments (``scope``), which is what
a release reports.
``compute_release_reports(project, *, clips, resamples=1000, seed=0) -> (dict, dict | Exception)``: the label
report and the free-text fields' semantic agreement (``semantic``) of a release's clips, from one reading of the data.
"""


def compute_project_report(
    project, *, scenario=None, clips=None, resamples: int = 1000, seed: int = 0, work_scope: str = "submitted"
) -> dict:
    """The full agreement report of a project as a JSON-ready, deterministic dict (see ``report``)."""
    # Imported here so that importing the package does not need the app registry.
    from .report import compute_project_report as compute

    return compute(project, scenario=scenario, clips=clips, resamples=resamples, seed=seed, work_scope=work_scope)


def compute_release_reports(project, *, clips, resamples: int = 1000, seed: int = 0) -> tuple[dict, dict | Exception]:
    """The label report and the free-text (semantic) report of ``clips``, the coded work of the project's study
    design (submitted work unless the lead chose otherwise): what a release ships.

    Each is the stored report when current for this data (and embedding model), else both are computed from one
    reading of the data and stored (``services.reports_for``). The free-text report is the exception that kept it
    from being computed (no embedding model, say) instead of a dict when it could not be; the label report raises.
    """
    from .services import LABELS, TEXTS, Params, reports_for

    params = Params(clips=tuple(sorted(clips)), resamples=resamples, seed=seed, work_scope=project.work_scope)
    reports = reports_for(project, params, (LABELS, TEXTS))
    if isinstance(reports[LABELS], Exception):
        raise reports[LABELS]
    return reports[LABELS], reports[TEXTS]


__all__ = ["compute_project_report", "compute_release_reports"]
