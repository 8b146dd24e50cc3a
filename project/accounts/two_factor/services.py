"""Two-factor devices of an account, kept by django-otp in the relational database: one TOTP
device (an authenticator app; unconfirmed until a code from it is typed) and one static
device holding RECOVERY_CODES single-use recovery codes.

Codes are checked under `select_for_update` (django-otp's `for_verify`), so two requests
with the same code cannot both be let in, and a TOTP code is not accepted twice (django-otp
keeps the last time step used). Wrong codes are counted by the caller in the log-in
limits (project.accounts.login_limits), in DynamoDB across processes; django-otp's own per-device
throttle is off (OTP_*_THROTTLE_FACTOR=0), since it would let anyone holding the password
delay the owner.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from django.db import transaction
from django_otp import devices_for_user
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from project.errors import ApplicationError

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser

RECOVERY_CODES = 10
APP_DEVICE_NAME = "Authenticator app"
RECOVERY_DEVICE_NAME = "Recovery codes"
CODE_WRONG = "That code is not right: type the 6 digits your app shows now, or one of your recovery codes."
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


def totp_setup_begin(*, user: AbstractBaseUser) -> TOTPDevice:
    """The account's authenticator app waiting to be confirmed: a new secret, or the one
    shown before (so reloading the page does not change the QR code under the person).

    Twice: the same device. Concurrently: two unconfirmed devices may exist; the one
    confirmed wins and `totp_setup_confirm` removes the other.
    """
    device = TOTPDevice.objects.filter(user_id=user.pk, confirmed=False).order_by("pk").first()
    if device is None:
        device = TOTPDevice.objects.create(user_id=user.pk, name=APP_DEVICE_NAME, confirmed=False)
    return device


def totp_setup_confirm(*, user: AbstractBaseUser, code: str) -> tuple[TOTPDevice, list[str]]:
    """Turn two-factor on with a code from the app just set up; answers the device and new
    recovery codes (shown once). ApplicationError on `code` when it is wrong.

    One transaction: twice, the second finds no unconfirmed device (an error); dies half
    way: nothing changed.
    """
    with transaction.atomic():
        pending = list(TOTPDevice.objects.select_for_update().filter(user_id=user.pk, confirmed=False))
        code = _normalized(code)
        device = next((one for one in pending if code.isdigit() and one.verify_token(code)), None)
        if device is None:
            raise ApplicationError(CODE_WRONG if pending else "Start the set-up again.", field="code")
        TOTPDevice.objects.filter(user_id=user.pk).exclude(pk=device.pk).delete()
        device.confirmed = True
        device.save(update_fields=["confirmed"])
        return device, recovery_codes_renew(user=user)


def recovery_codes_renew(*, user: AbstractBaseUser) -> list[str]:
    """New recovery codes (the old ones stop working). One transaction: all or nothing."""
    with transaction.atomic():
        device, _ = StaticDevice.objects.get_or_create(
            user_id=user.pk, defaults={"name": RECOVERY_DEVICE_NAME, "confirmed": True}
        )
        device.token_set.all().delete()
        codes = [StaticToken.random_token() for _ in range(RECOVERY_CODES)]
        StaticToken.objects.bulk_create([StaticToken(device=device, token=code) for code in codes])
    return codes


def recovery_codes_left(*, user: AbstractBaseUser) -> int:
    left: int = StaticToken.objects.filter(device__user_id=user.pk).count()
    return left


def second_factor_remove(*, user: AbstractBaseUser) -> None:
    """Turn two-factor off: the app and the recovery codes are forgotten. Idempotent."""
    with transaction.atomic():
        TOTPDevice.objects.filter(user_id=user.pk).delete()
        StaticDevice.objects.filter(user_id=user.pk).delete()


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
