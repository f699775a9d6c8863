"""Inter-annotator agreement: Krippendorff's alpha per field, with Krippendorff's bootstrap.

Public API (the release exporter calls it):
``compute_project_report(project, *, scenario=None, clips=None, resamples=1000, seed=0, work_scope="submitted")
-> dict``. Only coded work counts: by default revisions of submitted assignments (``scope``), which is what
a release reports.
``compute_semantic_report(project, *, clips=None, resamples=1000, seed=0, work_scope="submitted") -> dict``:
the free-text fields' semantic agreement (``semantic``), on the same scopes.
"""


def compute_project_report(
    project, *, scenario=None, clips=None, resamples: int = 1000, seed: int = 0, work_scope: str = "submitted"
) -> dict:
    """The full agreement report of a project as a JSON-ready, deterministic dict (see ``report``)."""
    # Imported here so that importing the package does not need the app registry.
    from .report import compute_project_report as compute

    return compute(project, scenario=scenario, clips=clips, resamples=resamples, seed=seed, work_scope=work_scope)


def compute_semantic_report(
    project, *, clips=None, resamples: int = 1000, seed: int = 0, work_scope: str = "submitted"
) -> dict:
    """The semantic agreement report of the free-text fields (``semantic``): the stored one when it is current for
    this data and embedding model, else computed (embedding the texts not yet cached) and stored."""
    from .services import TEXTS, Params, report_state

    params = Params(clips=tuple(sorted(clips)) if clips is not None else None, resamples=resamples, seed=seed,
                    work_scope=work_scope)  # fmt: skip
    state = report_state(project, params, sync=True, kind=TEXTS)
    if state.status != "ready":
        raise RuntimeError("the revisions changed while the semantic report was computed")
    return state.report.report


__all__ = ["compute_project_report", "compute_semantic_report"]
