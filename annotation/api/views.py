"""API views: thin; scoping comes from selectors."""

from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, viewsets
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import selectors
from ..models import ApiToken, TokenScope
from ..tokens import describe
from .serializers import ClipSerializer, ProjectSerializer


class ProjectViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = ProjectSerializer
    lookup_field = "slug"

    def get_queryset(self):
        return selectors.visible_projects(self.request.user)


class ProjectClipList(generics.ListAPIView):
    """Clips of a project that the caller may see."""

    serializer_class = ClipSerializer

    def get_queryset(self):
        project = selectors.visible_project(self.request.user, self.kwargs["slug"])
        return selectors.visible_clips(self.request.user, project).order_by("sample_id")


class TokenSerializer(serializers.Serializer):
    prefix = serializers.CharField(
        help_text="The key's first characters, to tell tokens apart (the key itself is never stored)"
    )
    scope = serializers.ChoiceField(choices=TokenScope.choices)
    created = serializers.DateTimeField()
    expires = serializers.DateTimeField()


class TokenPolicySerializer(serializers.Serializer):
    days = serializers.IntegerField(help_text="A token expires this many days after it is made (API_TOKEN_DAYS)")
    scopes = serializers.DictField(child=serializers.CharField())
    revoked_on_password_change = serializers.BooleanField()
    stored = serializers.CharField()


class MyTokensSerializer(serializers.Serializer):
    current = TokenSerializer(allow_null=True, help_text="The token this request was sent with (null with a session)")
    tokens = TokenSerializer(many=True, help_text="Every live token of the caller")
    policy = TokenPolicySerializer()


class MyTokens(APIView):
    """The caller's API tokens and the token policy; tokens are made and revoked with ``manage.py api_token``."""

    @extend_schema(summary="My API tokens and the token policy", responses={200: MyTokensSerializer})
    def get(self, request):
        current = request.auth if isinstance(request.auth, ApiToken) else None
        live = ApiToken.objects.filter(user=request.user, expiry__gt=timezone.now()).order_by("created")
        return Response(
            {
                "current": describe(current) if current else None,
                "tokens": [describe(t) for t in live],
                "policy": {
                    "days": settings.API_TOKEN_DAYS,
                    "scopes": {
                        TokenScope.READ: "GET, HEAD and OPTIONS only",
                        TokenScope.READ_WRITE: "whatever the user's role may do",
                    },
                    "revoked_on_password_change": True,
                    "stored": "a SHA-512 digest of each key; the key is shown once, by manage.py api_token",
                },
            }
        )
