"""URL patterns of the meaning capability, included by rescue_annot/urls.py."""

from django.urls import path

from . import api, views

web_urlpatterns = [
    path("projects/<slug:slug>/meaning/judge/", views.judge_page, name="meaning-judge"),
    path("projects/<slug:slug>/meaning/run-judge/", views.run_judge, name="meaning-run-judge"),
]
api_urlpatterns = [
    path("projects/<slug:slug>/meaning/pair/", api.NextPairView.as_view(), name="api-meaning-pair"),
    path("projects/<slug:slug>/meaning/judgements/", api.JudgementsView.as_view(), name="api-meaning-judgements"),
    path("projects/<slug:slug>/meaning/validity/", api.ValidityView.as_view(), name="api-meaning-validity"),
]
