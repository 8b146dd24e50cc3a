from django.contrib import admin
from django.contrib.auth.admin import UserAdmin as DjangoUserAdmin

from social.models import User


@admin.register(User)
class UserAdmin(DjangoUserAdmin):
    # django-stubs type ModelAdmin.fieldsets as optional; Django's UserAdmin always sets it.
    fieldsets = (*DjangoUserAdmin.fieldsets, ("Profile", {"fields": ("display_name",)}))  # type: ignore[misc]
    add_fieldsets = (*DjangoUserAdmin.add_fieldsets, ("Profile", {"fields": ("display_name",)}))
    list_display = ("username", "display_name", "email", "is_staff", "is_active", "date_joined")
    search_fields = ("username", "display_name", "email")
