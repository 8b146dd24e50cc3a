from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin

from social.models import ModerationAction, User


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    # django-stubs type ModelAdmin.fieldsets as optional; Django's UserAdmin always sets it.
    fieldsets = (*DjangoUserAdmin.fieldsets, ("Profile", {"fields": ("display_name",)}))  # type: ignore[misc]
    add_fieldsets = (*DjangoUserAdmin.add_fieldsets, ("Profile", {"fields": ("display_name",)}))
    list_display = ("username", "display_name", "email", "is_staff", "is_active", "date_joined")
    search_fields = ("username", "display_name", "email")


@admin.register(ModerationAction)
class ModerationActionAdmin(admin.ModelAdmin):
    """The staff audit log: read-only, filterable by staff, action, target and date."""

    list_display = ("at", "staff_username", "action", "target_type", "target_id", "outcome", "source", "detail")
    list_filter = ("action", "target_type", "outcome", "source", ("staff", admin.RelatedOnlyFieldListFilter), "at")
    search_fields = ("target_id", "staff_username", "detail")
    date_hierarchy = "at"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


from social.spam import admin as spam_admin  # noqa: E402, F401  (registers Held comments and Watched words)
from social.spam import admin_levels  # noqa: E402, F401  (registers Trust records)
