"""URL patterns of the agreement capability, included by rescue_annot/urls.py."""
web_urlpatterns: list = []  # pages, mounted at /
api_urlpatterns: list = []  # endpoints, mounted at /api/v1/
