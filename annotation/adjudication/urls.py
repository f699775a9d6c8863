"""URL patterns of the adjudication capability, included by rescue_annot/urls.py."""

from django.urls import path

from ..views import choose_lead_project
from . import api, views

web_urlpatterns = [  # pages, mounted at /
    path("adjudication/", choose_lead_project, {"target": "adjudication"}, name="adjudication-projects"),
    path("projects/<slug:slug>/adjudication/", views.project_adjudication, name="adjudication-index"),
    path("adjudication/clips/<int:clip_id>/", views.clip_adjudication, name="adjudication-clip"),
    path(
        "adjudication/clips/<int:clip_id>/accept-unanimous/",
        views.accept_unanimous,
        name="adjudication-accept-unanimous",
    ),
    path(
        "adjudication/clips/<int:clip_id>/accept-agreeing/", views.accept_agreeing, name="adjudication-accept-agreeing"
    ),
    path(
        "adjudication/clips/<int:clip_id>/mark-adjudicated/",
        views.mark_adjudicated,
        name="adjudication-mark-adjudicated",
    ),
    path("adjudication/clips/<int:clip_id>/accept-discard/", views.accept_discard, name="adjudication-accept-discard"),
    path(
        "adjudication/clips/<int:clip_id>/dismiss-discard/", views.dismiss_discard, name="adjudication-dismiss-discard"
    ),
    path("adjudication/clips/<int:clip_id>/rereview/", views.request_rereview, name="adjudication-rereview"),
]
api_urlpatterns = [  # endpoints, mounted at /api/v1/
    path("projects/<slug:slug>/adjudication/", api.ProjectAdjudication.as_view(), name="api-project-adjudication"),
    path("clips/<int:clip_id>/adjudication/", api.ClipAdjudication.as_view(), name="api-clip-adjudication"),
    path(
        "clips/<int:clip_id>/adjudication/accept-unanimous/",
        api.AcceptUnanimous.as_view(),
        name="api-adjudication-accept-unanimous",
    ),
    path("clips/<int:clip_id>/adjudication/agreeing/", api.AgreeingRows.as_view(), name="api-adjudication-agreeing"),
    path(
        "clips/<int:clip_id>/adjudication/accept-agreeing/",
        api.AcceptAgreeing.as_view(),
        name="api-adjudication-accept-agreeing",
    ),
    path(
        "clips/<int:clip_id>/adjudication/mark-adjudicated/",
        api.MarkAdjudicated.as_view(),
        name="api-adjudication-mark-adjudicated",
    ),
    path(
        "clips/<int:clip_id>/adjudication/accept-discard/",
        api.DiscardDecision.as_view(accept=True),
        name="api-adjudication-accept-discard",
    ),
    path(
        "clips/<int:clip_id>/adjudication/dismiss-discard/",
        api.DiscardDecision.as_view(accept=False),
        name="api-adjudication-dismiss-discard",
    ),
    path("clips/<int:clip_id>/adjudication/rereview/", api.RequestRereview.as_view(), name="api-adjudication-rereview"),
    path("rows/<int:row_id>/gold/", api.RowGold.as_view(), name="api-row-gold"),
    path("rows/<int:row_id>/gold/validate/", api.RowGoldValidate.as_view(), name="api-row-gold-validate"),
    path("rows/<int:row_id>/gold/decide/", api.RowGoldDecide.as_view(), name="api-row-gold-decide"),
    path(
        "rows/<int:row_id>/gold/accept-suggestion/",
        api.RowGoldAcceptSuggestion.as_view(),
        name="api-row-gold-accept-suggestion",
    ),
]
