"""Writes of the study design: one function, every setting checked, the change audited."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation

from django.db import transaction

from ..models import Project, WorkScope
from ..services import ServiceError

MAX_QUICK_SECONDS = 60
MAX_MIN_CODERS = 50  # as many coders as a clip can be given (the assign form's limit)
UNSET = object()


def _share(value) -> Decimal:
    try:
        share = Decimal(str(value)).quantize(Decimal("0.01"))
    except (InvalidOperation, ValueError):
        raise ServiceError(f"the from-empty share must be a number from 0 to 1 (0.2 is 20%), got {value!r}") from None
    if not share.is_finite() or not Decimal(0) <= share <= Decimal(1):
        raise ServiceError(f"the from-empty share must be from 0 to 1 (0.2 is 20%), got {value}")
    return share


@transaction.atomic
def update_design(
    project: Project,
    user,
    *,
    work_scope=UNSET,
    adjudication_min_coders=UNSET,
    from_empty_share=UNSET,
    quick_confirm_seconds=UNSET,
    reason: str = "",
) -> Project:
    """Change the settings given (the others stay); refused with a message naming the setting when one is wrong.

    ``adjudication_min_coders`` None means every assigned coder. A change of the
    from-empty share applies to assignments made from then on; the assignments
    made before keep the mode they were given (each records why).
    """
    project = Project.objects.select_for_update().get(pk=project.pk)
    changed = []
    if work_scope is not UNSET:
        if work_scope not in WorkScope.values:
            raise ServiceError(f"the work scope must be one of {', '.join(WorkScope.values)}, got {work_scope!r}")
        changed += ["work scope"] if project.work_scope != work_scope else []
        project.work_scope = work_scope
    if adjudication_min_coders is not UNSET:
        if adjudication_min_coders is not None:
            if (
                isinstance(adjudication_min_coders, bool)
                or not isinstance(adjudication_min_coders, int)
                or not 1 <= adjudication_min_coders <= MAX_MIN_CODERS
            ):
                raise ServiceError(
                    f"the coders who must submit before adjudication must be a whole number from 1 to {MAX_MIN_CODERS} "
                    f"(or empty: every coder), got {adjudication_min_coders!r}"
                )
        changed += ["coders before adjudication"] if project.adjudication_min_coders != adjudication_min_coders else []
        project.adjudication_min_coders = adjudication_min_coders
    if from_empty_share is not UNSET:
        share = _share(from_empty_share)
        changed += ["from-empty share"] if Decimal(project.from_empty_share) != share else []
        project.from_empty_share = share
    if quick_confirm_seconds is not UNSET:
        if (
            isinstance(quick_confirm_seconds, bool)
            or not isinstance(quick_confirm_seconds, int)
            or not 1 <= quick_confirm_seconds <= MAX_QUICK_SECONDS
        ):
            raise ServiceError(
                f"a quick confirmation must be a whole number of seconds from 1 to {MAX_QUICK_SECONDS}, got "
                f"{quick_confirm_seconds!r}"
            )
        changed += ["quick confirmation"] if project.quick_confirm_seconds != quick_confirm_seconds else []
        project.quick_confirm_seconds = quick_confirm_seconds
    if changed:
        project._history_user = user if getattr(user, "is_authenticated", False) else None
        project._change_reason = (
            f"study design: {', '.join(changed)}" + (f" ({reason.strip()})" if reason.strip() else "")
        )[:100]
        project.save()
    return project
