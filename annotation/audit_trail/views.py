"""The leads' audit-trail page: who changed what in a project, when and from where."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.utils.http import urlencode
from django.views.decorators.http import require_GET

from .. import selectors as scoped
from . import selectors


def lead_project(user, slug: str):
    return scoped.lead_project(user, slug, "The audit trail is for leads.")


@login_required
@require_GET
def project_history(request, slug):
    project = lead_project(request.user, slug)
    context = {"project": project, "kinds": selectors.KINDS, "sources": selectors.SOURCES}
    try:
        filters = selectors.Filters.from_query(request.GET)
    except selectors.BadFilter as exc:
        return render(
            request,
            "audit_trail/project.html",
            {**context, "filters": selectors.Filters(), "error": str(exc)},
            status=400,
        )
    page = selectors.project_history(project, filters)
    return render(
        request,
        "audit_trail/project.html",
        {
            **context,
            "filters": filters,
            "page": page,
            "next_query": urlencode(filters.as_query(cursor=page.next_cursor)) if page.next_cursor else None,
            "first_query": urlencode(filters.as_query(cursor="")),
        },
    )
