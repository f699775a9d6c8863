from rest_framework import serializers

from ..models import Clip, Project


class ProjectSerializer(serializers.ModelSerializer):
    class Meta:
        model = Project
        fields = ["slug", "name", "taxonomy_version", "annotators_per_clip", "created_at"]


class ClipSerializer(serializers.ModelSerializer):
    class Meta:
        model = Clip
        fields = ["id", "sample_id", "scenario", "participants", "source_file", "duration", "state", "content_hash"]
