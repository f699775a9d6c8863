"""Roles are Django groups; superusers are admins."""

from __future__ import annotations

ANNOTATOR = "annotator"
LEAD = "lead"
ADMIN = "admin"
ROLES = (ANNOTATOR, LEAD, ADMIN)
GROUP_ROLES = (ANNOTATOR, LEAD)


def has_role(user, role: str) -> bool:
    if not user.is_authenticated:
        return False
    if user.is_superuser:
        return True
    return user.groups.filter(name=role).exists()


def is_lead(user) -> bool:
    """Leads and admins see everything."""
    return has_role(user, LEAD)


def role_of(user) -> str | None:
    if user.is_superuser:
        return ADMIN
    names = set(user.groups.values_list("name", flat=True))
    for role in (LEAD, ANNOTATOR):
        if role in names:
            return role
    return None
