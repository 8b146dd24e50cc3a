"""The settings page: display name and e-mail address (verified through a link it mails)."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect, render

from notifications.mail.verification import email_address_set, email_verification_send
from project.errors import ApplicationError, RateLimited
from social import services


class DisplayNameForm(forms.Form):
    display_name = forms.CharField(
        max_length=services.DISPLAY_NAME_MAX_LENGTH,
        required=False,
        help_text="Shown beside your comments. Leave it empty to show your username.",
    )


class EmailForm(forms.Form):
    email = forms.EmailField(
        required=False,
        label="E-mail address",
        help_text="For the notification e-mail you choose and password resets. A new address is used "
        "for notifications once you follow the link we send to it.",
    )


@login_required
def account_settings(request):
    """Change one's display name and e-mail address (and have it verified); links to the password change."""
    user = request.user
    action = request.POST.get("action", "name") if request.method == "POST" else None
    form = DisplayNameForm(request.POST if action == "name" else None, initial={"display_name": user.display_name})
    email_form = EmailForm(request.POST if action in ("email", "verify") else None, initial={"email": user.email})
    if action == "name" and form.is_valid():
        try:
            services.user_display_name_set(user=user, display_name=form.cleaned_data["display_name"])
        except ApplicationError as error:
            form.add_error("display_name", error.message)
        else:
            messages.success(request, f"Saved: your comments now show “{user.shown_name}”.")
            return redirect("account-settings")
    if action in ("email", "verify") and email_form.is_valid():
        try:
            changed = email_address_set(user=user, email=email_form.cleaned_data["email"])
            if user.email and (changed or action == "verify"):
                email_verification_send(user=user)
                messages.success(request, f"We sent a verification link to {user.email}: follow it to verify.")
            elif changed:
                messages.success(request, "Saved: your account has no e-mail address now.")
            return redirect("account-settings")
        except (ApplicationError, RateLimited) as error:
            email_form.add_error("email", error.message)
    return render(request, "social/settings.html", {"form": form, "email_form": email_form})
