"""Two-factor devices of an account, kept by django-otp in the relational database: one TOTP
device (an authenticator app; unconfirmed until a code from it is typed) and one static
device holding RECOVERY_CODES single-use recovery codes.

Codes are checked under `select_for_update` (django-otp's `for_verify`), so two requests
with the same code cannot both be let in, and a TOTP code is not accepted twice (django-otp
keeps the last time step used). Wrong codes are counted by the caller in the log-in
limits (project.identity.login_limits), in DynamoDB across processes; django-otp's own per-device
throttle is off (OTP_*_THROTTLE_FACTOR=0), since it would let anyone holding the password
delay the owner.
"""

from __future__ import annotations

import re
import time
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django.dispatch import Signal
from django.utils.translation import gettext_lazy
from django_otp import devices_for_user
from django_otp.oath import TOTP
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from project.clock import clock
from project.errors import ApplicationError

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser

RECOVERY_CODES = 10
APP_DEVICE_NAME = "Authenticator app"
RECOVERY_DEVICE_NAME = "Recovery codes"
CODE_WRONG = gettext_lazy(
    "That code is not right: type the 6 digits your app shows now, or one of your recovery codes."
)
CODE_JUST_USED = gettext_lazy("That code was just used: wait for the next code your app shows (at most 30 seconds).")
SETUP_EXPIRED = gettext_lazy(
    "This key is more than 10 minutes old or was replaced: scan the new one below and type its code."
)
SETUP_MINUTES = 10  # an unconfirmed key (shown on the set-up page) can be confirmed this long

# Sent after two-factor changed for an account: `user_id` (str), `change` (TURNED_ON,
# TURNED_OFF or CODES_RENEWED). The notifications app mails the verified address.
second_factor_changed = Signal()
TURNED_ON, TURNED_OFF, CODES_RENEWED = "on", "off", "codes"
_SEPARATORS = re.compile(r"[\s-]+")


def second_factor_enabled(*, user: AbstractBaseUser) -> bool:
    """The account logs in with a code after its password (a confirmed authenticator app)."""
    enabled: bool = TOTPDevice.objects.filter(user_id=user.pk, confirmed=True).exists()
    return enabled


def _normalized(code: str) -> str:
    return _SEPARATORS.sub("", code or "").lower()


def second_factor_verify(*, user: AbstractBaseUser, code: str) -> Any:
    """The device that accepts `code` (the app's current code, or an unused recovery code,
    which is used up), else None.

    Twice with one code: the second is refused (a TOTP step is accepted once, a recovery
    code deleted). Concurrently: the devices are locked for the check, so one wins.
    """
    code = _normalized(code)
    if not code:
        return None
    with transaction.atomic():
        for device in devices_for_user(user, confirmed=True, for_verify=True):
            if isinstance(device, TOTPDevice) and not code.isdigit():
                continue
            if device.verify_token(code):
                return device
    return None


def totp_setup_begin(*, user: AbstractBaseUser, fresh: bool) -> TOTPDevice:
    """The authenticator app waiting to be confirmed, whose key the set-up page shows.

    `fresh` (each visit of the page): a new secret, and every earlier unconfirmed one of the
    account is deleted, so a key someone saw once never becomes the account's. Else (the
    page shown again after a wrong code): the latest one still within SETUP_MINUTES, or a
    new one. Twice: two secrets, the last one stands. Concurrently (two tabs): each may
    make one; the one confirmed wins and `totp_setup_confirm` deletes the rest.
    """
    if not fresh:
        device = _setup_pending(user).order_by("-pk").first()
        if device is not None:
            return device
    TOTPDevice.objects.filter(user_id=user.pk, confirmed=False).delete()
    device = TOTPDevice.objects.create(user_id=user.pk, name=APP_DEVICE_NAME, confirmed=False)
    device.created_at = clock.utcnow()  # django-otp stamps Django's time; the limit reads the project's clock
    TOTPDevice.objects.filter(pk=device.pk).update(created_at=device.created_at)
    return device


def _setup_pending(user: AbstractBaseUser) -> Any:
    """The account's unconfirmed apps set up less than SETUP_MINUTES ago."""
    since = clock.utcnow() - timedelta(minutes=SETUP_MINUTES)
    return TOTPDevice.objects.filter(user_id=user.pk, confirmed=False, created_at__gte=since)


def unconfirmed_devices_forget(*, user_id: Any) -> int:
    """Delete the account's unconfirmed authenticator apps (a new password: a key seen before
    it must not become the account's). Idempotent; answers how many went."""
    deleted: int = TOTPDevice.objects.filter(user_id=user_id, confirmed=False).delete()[0]
    return deleted


def password_saved_forget_setup(sender: Any, instance: AbstractBaseUser, created: bool, **kwargs: Any) -> None:
    """post_save of the user model: a new password (the change and reset pages, the admin,
    `changepassword`: Django's `_password` mark, as project.identity.api_tokens reads it)
    deletes the unconfirmed authenticator apps."""
    if not created and getattr(instance, "_password", None) is not None:
        unconfirmed_devices_forget(user_id=instance.pk)


def totp_setup_confirm(*, user: AbstractBaseUser, code: str) -> tuple[TOTPDevice, list[str]]:
    """Turn two-factor on with a code from the app just set up (within SETUP_MINUTES); answers
    the device and new recovery codes (shown once). ApplicationError on `code` when it is
    wrong. The caller has checked the password (the page asks for it).

    One transaction, then the owner's mail (the signal, after the commit): twice, the second
    finds no unconfirmed device (an error); dies in the transaction: nothing changed; dies
    after it: on, maybe without its mail.
    """
    with transaction.atomic():
        pending = list(_setup_pending(user).select_for_update())
        code = _normalized(code)
        device = next((one for one in pending if code.isdigit() and one.verify_token(code)), None)
        if device is None:
            raise ApplicationError(CODE_WRONG if pending else SETUP_EXPIRED, field="code")
        TOTPDevice.objects.filter(user_id=user.pk).exclude(pk=device.pk).delete()
        device.confirmed = True
        device.save(update_fields=["confirmed"])
        codes = _recovery_codes_new(user=user)
    second_factor_changed.send(sender=TOTPDevice, user_id=str(user.pk), change=TURNED_ON)
    return device, codes


def _recovery_codes_new(*, user: AbstractBaseUser) -> list[str]:
    with transaction.atomic():
        device, _ = StaticDevice.objects.get_or_create(
            user_id=user.pk, defaults={"name": RECOVERY_DEVICE_NAME, "confirmed": True}
        )
        device.token_set.all().delete()
        codes = [StaticToken.random_token() for _ in range(RECOVERY_CODES)]
        StaticToken.objects.bulk_create([StaticToken(device=device, token=code) for code in codes])
    return codes


def recovery_codes_renew(*, user: AbstractBaseUser) -> list[str]:
    """New recovery codes (the old ones stop working), and a mail to the owner (the signal).
    The caller has checked the password. One transaction, then the mail: twice, two sets,
    the last one stands, two mails; dies after the commit: new codes, maybe no mail."""
    codes = _recovery_codes_new(user=user)
    second_factor_changed.send(sender=StaticDevice, user_id=str(user.pk), change=CODES_RENEWED)
    return codes


def recovery_codes_left(*, user: AbstractBaseUser) -> int:
    left: int = StaticToken.objects.filter(device__user_id=user.pk).count()
    return left


def second_factor_remove(*, user: AbstractBaseUser) -> None:
    """Turn two-factor off: the app and the recovery codes are forgotten, and the owner is
    mailed (the signal, after the commit) when it was on. Twice: nothing more happens (no
    second mail). Dies after the commit: off, maybe without its mail."""
    with transaction.atomic():
        deleted, _ = TOTPDevice.objects.filter(user_id=user.pk).delete()
        StaticDevice.objects.filter(user_id=user.pk).delete()
    if deleted:
        second_factor_changed.send(sender=TOTPDevice, user_id=str(user.pk), change=TURNED_OFF)


def code_just_used(*, user: AbstractBaseUser, code: str) -> bool:
    """`code` is the app's code of the time step the account last used (refused now, since a
    step is accepted once): the person should wait for the next code, not retype this one."""
    code = _normalized(code)
    device = TOTPDevice.objects.filter(user_id=user.pk, confirmed=True).first()
    if device is None or device.last_t < 0 or not code.isdigit():
        return False
    totp = TOTP(device.bin_key, device.step, device.t0, device.digits, 0)  # last_t counts the drift in
    totp.time = time.time()  # TOTP's time is the real one, as django-otp's check reads it
    if totp.t() - device.last_t > device.tolerance + device.drift + 1:  # long ago: the code is just wrong
        return False
    totp.time = device.t0 + device.last_t * device.step
    expected: int = totp.token()
    return int(code) == expected


def totp_qr_svg(device: TOTPDevice) -> str:
    """The device's otpauth:// address as an inline SVG QR code (drawn here, no network service)."""
    import qrcode
    import qrcode.image.svg

    image = qrcode.make(device.config_url, image_factory=qrcode.image.svg.SvgPathImage, box_size=8, border=2)
    svg: str = image.to_string(encoding="unicode")
    return svg.split("?>", 1)[-1].strip()  # no XML declaration inside HTML


def totp_secret_text(device: TOTPDevice) -> str:
    """The secret as an app takes it typed (base32, in groups of four)."""
    from base64 import b32encode

    secret = b32encode(device.bin_key).decode()
    return " ".join(secret[start : start + 4] for start in range(0, len(secret), 4))
