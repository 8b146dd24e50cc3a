"""Admin → Social → Trust records: each account's trust level, why it has it and the conduct it
was earned by; staff set a level by hand (it wins until cleared) with a note."""

from __future__ import annotations

from django.contrib import admin

from social.models import TrustRecord
from social.spam.levels import trust_set

# The conduct a level is earned by (likes: from established accounts), shown in the list and the form.
CONDUCT = ("comments", "likes_received", "days_visited", "upheld_reports")


@admin.register(TrustRecord)
class TrustRecordAdmin(admin.ModelAdmin):
    list_display = ("user", "level", "why", "manual_level", *CONDUCT)
    list_filter = ("level", "manual_level")
    search_fields = ("user__username",)
    raw_id_fields = ("user",)
    fields = ("user", "level", "why", "manual_level", "manual_note", "manual_by", *CONDUCT, "evaluated_at")
    readonly_fields = ("level", "why", "manual_by", *CONDUCT, "evaluated_at")

    def get_readonly_fields(self, request, obj=None):
        return self.readonly_fields if obj is None else ("user", *self.readonly_fields)

    def save_model(self, request, obj, form, change):
        """A level set by hand goes through `trust_set` (the level recomputed, who set it kept)."""
        if not change:
            super().save_model(request, obj, form, change)
        trust_set(
            user_id=str(obj.user_id),
            level=obj.manual_level,
            staff_username=request.user.get_username(),
            note=obj.manual_note,
        )
        obj.refresh_from_db()
