"""DRF permissions shared by the capabilities' endpoints."""

from rest_framework.permissions import BasePermission

from ..roles import is_lead


class IsLead(BasePermission):
    """Leads and admins only; a capability's (``lead_only``) says in ``message`` what is reserved for them."""

    message = "This is for leads."

    def has_permission(self, request, view):
        return is_lead(request.user)


def lead_only(refusal: str) -> type[IsLead]:
    """The lead-only guard of a capability's endpoints: ``IsLead``, refusing everyone else (403) with ``refusal``.
    The pages' is ``selectors.require_lead``."""
    return type("IsLead", (IsLead,), {"message": refusal, "__module__": IsLead.__module__})
