"""URL patterns of the agreement capability, included by rescue_annot/urls.py.

The agreement page itself and ``.../agreement/texts/`` are routed by ``meaning.urls``: they show each free-text
figure's validity, which is meaning's (meaning reads agreement, never the reverse)."""

from django.urls import path

from . import api, views

web_urlpatterns = [  # pages, mounted at /
    path("projects/<slug:slug>/agreement/plot.svg", views.plot, name="agreement-plot"),
]
api_urlpatterns = [  # endpoints, mounted at /api/v1/
    path("projects/<slug:slug>/agreement/", api.AgreementReportView.as_view(), name="api-agreement"),
    path("projects/<slug:slug>/agreement/status/", api.AgreementStatusView.as_view(), name="api-agreement-status"),
    path(
        "projects/<slug:slug>/agreement/texts/status/",
        api.AgreementTextsStatusView.as_view(),
        name="api-agreement-texts-status",
    ),
]
