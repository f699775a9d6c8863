"""URL patterns of the agreement capability, included by rescue_annot/urls.py."""

from django.urls import path

from . import api, views

web_urlpatterns = [  # pages, mounted at /
    path("projects/<slug:slug>/agreement/", views.dashboard, name="agreement-dashboard"),
    path("projects/<slug:slug>/agreement/plot.svg", views.plot, name="agreement-plot"),
]
api_urlpatterns = [  # endpoints, mounted at /api/v1/
    path("projects/<slug:slug>/agreement/", api.AgreementReportView.as_view(), name="api-agreement"),
    path("projects/<slug:slug>/agreement/status/", api.AgreementStatusView.as_view(), name="api-agreement-status"),
    path("projects/<slug:slug>/agreement/texts/", api.AgreementTextsView.as_view(), name="api-agreement-texts"),
    path(
        "projects/<slug:slug>/agreement/texts/status/",
        api.AgreementTextsStatusView.as_view(),
        name="api-agreement-texts-status",
    ),
]
