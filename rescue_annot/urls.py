from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from annotation.adjudication import urls as adjudication_urls
from annotation.agreement import urls as agreement_urls
from annotation.assignment import urls as assignment_urls
from annotation.audit_trail import urls as audit_trail_urls
from annotation.codebook import urls as codebook_urls
from annotation.ingest import urls as ingest_urls
from annotation.lockout import PasswordChangeView
from annotation.meaning import urls as meaning_urls
from annotation.preannotate import urls as preannotate_urls
from annotation.record import urls as record_urls
from annotation.releases import urls as releases_urls
from annotation.study import urls as study_urls
from annotation.workspace import urls as workspace_urls

# Each capability package owns its pages and endpoints.
CAPABILITIES = (
    ingest_urls,
    preannotate_urls,
    workspace_urls,
    adjudication_urls,
    assignment_urls,
    agreement_urls,
    releases_urls,
    audit_trail_urls,
    codebook_urls,
    study_urls,
    meaning_urls,
    record_urls,
)

urlpatterns = [
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Wrong old passwords count as failed logins (annotation/lockout.py).
    path("accounts/password/", PasswordChangeView.as_view(), name="password_change"),
    path("accounts/password/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("api/v1/", include("annotation.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    # The split view serves its script as a file, so the CSP needs no inline script.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="api-schema"), name="api-docs"),
    path("", include("annotation.urls")),
]
for capability in CAPABILITIES:
    urlpatterns += [path("api/v1/", include(capability.api_urlpatterns)), path("", include(capability.web_urlpatterns))]
