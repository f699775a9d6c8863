"""URL patterns of the meaning capability, included by rescue_annot/urls.py.

With the agreement page and ``.../agreement/texts/``: both show agreement's figures with meaning's validity
(``agreement_views``, ``agreement_api``); the rest of the agreement routes are ``agreement.urls``."""

from django.urls import path

from . import agreement_api, agreement_views, api, views

web_urlpatterns = [
    path("projects/<slug:slug>/meaning/judge/", views.judge_page, name="meaning-judge"),
    path("projects/<slug:slug>/meaning/run-judge/", views.run_judge, name="meaning-run-judge"),
    path("projects/<slug:slug>/agreement/", agreement_views.dashboard, name="agreement-dashboard"),
]
api_urlpatterns = [
    path("projects/<slug:slug>/meaning/pair/", api.NextPairView.as_view(), name="api-meaning-pair"),
    path("projects/<slug:slug>/meaning/judgements/", api.JudgementsView.as_view(), name="api-meaning-judgements"),
    path("projects/<slug:slug>/meaning/validity/", api.ValidityView.as_view(), name="api-meaning-validity"),
    path(
        "projects/<slug:slug>/agreement/texts/", agreement_api.AgreementTextsView.as_view(), name="api-agreement-texts"
    ),
]
