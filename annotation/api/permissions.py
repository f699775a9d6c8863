"""DRF permissions shared by the capabilities' endpoints."""

from rest_framework.permissions import BasePermission

from ..roles import is_lead


class IsLead(BasePermission):
    """Leads and admins only; a capability's subclass says in ``message`` what is reserved for them."""

    message = "This is for leads."

    def has_permission(self, request, view):
        return is_lead(request.user)
