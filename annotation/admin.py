"""Admin for every model. History (the audit trail) is viewable, never editable;
releases are read-only."""

from django.contrib import admin
from simple_history.admin import SimpleHistoryAdmin

from . import models


class AuditedAdmin(SimpleHistoryAdmin):
    # Reverting from history would be a write outside the workflow services.
    def revert_view(self, request, *args, **kwargs):
        from django.core.exceptions import PermissionDenied

        raise PermissionDenied("history is read-only")


@admin.register(models.Project)
class ProjectAdmin(AuditedAdmin):
    list_display = ["slug", "name", "taxonomy_version", "annotators_per_clip", "created_at"]
    search_fields = ["slug", "name"]


@admin.register(models.Clip)
class ClipAdmin(AuditedAdmin):
    list_display = ["sample_id", "project", "scenario", "state", "duration"]
    list_filter = ["project", "scenario", "state"]
    search_fields = ["sample_id"]
    readonly_fields = ["content_hash", "release_keys"]


@admin.register(models.Cue)
class CueAdmin(admin.ModelAdmin):
    list_display = ["clip", "position", "start_time", "end_time", "speaker"]
    list_select_related = ["clip"]
    search_fields = ["clip__sample_id", "text"]


@admin.register(models.Row)
class RowAdmin(AuditedAdmin):
    list_display = ["clip", "row_index", "start_time", "end_time", "primary_speaker"]
    list_select_related = ["clip"]
    search_fields = ["clip__sample_id", "dialogue_cleaned"]


@admin.register(models.Draft)
class DraftAdmin(AuditedAdmin):
    list_display = ["row", "source", "updated_at"]
    list_filter = ["source"]
    raw_id_fields = ["row"]


@admin.register(models.Revision)
class RevisionAdmin(AuditedAdmin):
    list_display = ["row", "annotator", "version", "status", "updated_at"]
    list_filter = ["status", "annotator"]
    raw_id_fields = ["row"]


@admin.register(models.Gold)
class GoldAdmin(AuditedAdmin):
    list_display = ["row", "decided_by", "updated_at"]
    raw_id_fields = ["row"]


@admin.register(models.Assignment)
class AssignmentAdmin(AuditedAdmin):
    list_display = ["clip", "annotator", "mode", "state", "created_at"]
    list_filter = ["mode", "state"]


@admin.register(models.Comment)
class CommentAdmin(AuditedAdmin):
    list_display = ["clip", "row", "author", "kind", "resolved", "created_at"]
    list_filter = ["kind", "resolved"]


@admin.register(models.Job)
class JobAdmin(admin.ModelAdmin):
    list_display = ["kind", "state", "project", "clip", "progress_done", "progress_total", "created_at"]
    list_filter = ["kind", "state"]
    readonly_fields = [f.name for f in models.Job._meta.fields]


class RecordAdmin(admin.ModelAdmin):
    """Records the workflow writes (releases by freezing, import records by imports): viewable, never edited here."""

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_add_permission(self, request):
        return False


@admin.register(models.Release)
class ReleaseAdmin(RecordAdmin):
    list_display = ["project", "version", "seed", "created_at"]


@admin.register(models.ImportRecord)
class ImportRecordAdmin(RecordAdmin):
    list_display = ["project", "kind", "file_path", "row_count", "imported_by", "created_at"]
    list_filter = ["project", "kind"]


@admin.register(models.GuidanceVersion)
class GuidanceVersionAdmin(RecordAdmin):
    """Versions of a project's guidance: written on the guidance page, the API or ``manage.py guidance``."""

    list_display = ["project", "number", "created_by", "created_at", "reason"]
    list_filter = ["project"]
