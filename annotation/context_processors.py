"""Template context every page needs."""

from .roles import is_lead


def roles(request):
    user = getattr(request, "user", None)
    return {"is_lead_user": bool(user and user.is_authenticated and is_lead(user))}
