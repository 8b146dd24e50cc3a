"""Journey at a phone's width (390 px): a person turns on two-factor log-in by scanning the QR
code (the test reads the device's key and computes the code with django-otp's TOTP, as the
app would), saves the recovery codes (copy, download), logs out, and logs in with the password and a code.
The code just used to turn it on is refused as just used (the field emptied), the codes
can be copied and downloaded, and a recovery-code log-in says how many are left. Each page
on the way passes axe-core and fits the window."""

from __future__ import annotations

import re
import time

from django_otp.oath import TOTP
from django_otp.plugins.otp_totp.models import TOTPDevice
from playwright.sync_api import expect

from tests.browser.conftest import PHONE, axe_violations, horizontal_overflow

PASSWORD = "correct-Horse-battery-9"


def checked(page, problems: list[str], name: str) -> None:
    problems += [f"{name}: {finding}" for finding in axe_violations(page)]
    if horizontal_overflow(page) > 0:
        problems.append(f"{name}: wider than the window")


def app_code(user) -> str:
    """What the authenticator app shows now. django-otp takes each 30-s step once: the code
    step after the set-up is a new step, as it would be for a person (no waiting here)."""
    device = TOTPDevice.objects.get(user=user)
    TOTPDevice.objects.filter(pk=device.pk).update(last_t=-1)
    totp = TOTP(device.bin_key, device.step, device.t0, device.digits, device.drift)
    totp.time = time.time()
    return f"{totp.token():0{device.digits}d}"


def test_a_person_turns_on_two_factor_then_logs_in_with_a_code(pages, make_user):
    alice = make_user("alice", display_name="Alice", password=PASSWORD)
    problems: list[str] = []
    page = pages.open("/accounts/login/", viewport=PHONE)
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", PASSWORD)
    page.get_by_role("button", name=re.compile("log in", re.I)).click()
    expect(page.get_by_role("button", name="Log out")).to_be_visible()

    page.goto("/me/settings/")
    page.get_by_role("link", name="Two-factor log-in").click()
    expect(page.get_by_role("heading", name="Two-factor log-in")).to_be_visible()
    qr = page.get_by_role("img", name="QR code for your authenticator app")
    expect(qr).to_be_visible()
    assert qr.bounding_box()["width"] <= PHONE["width"]
    key = page.locator("code.secret").inner_text().replace(" ", "")
    assert len(key) == 32  # the key an app can take typed
    checked(page, problems, "set-up")
    used = app_code(alice)
    page.get_by_role("textbox", name="Code").fill(used)
    page.get_by_label("Your password").fill(PASSWORD)
    page.get_by_role("button", name="Turn on").click()
    expect(page.get_by_text("Two-factor log-in is on")).to_be_visible()
    expect(page.get_by_role("heading", name="Your recovery codes")).to_be_visible()
    expect(page.locator(".codes li")).to_have_count(10)
    download = page.get_by_role("link", name="Download as a text file")
    expect(download).to_have_attribute("download", "dynamo-social-recovery-codes.txt")
    codes = page.locator(".codes li").all_inner_texts()
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.get_by_role("button", name="Copy the codes").click()
    expect(page.get_by_text("Copied: paste them somewhere safe.")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == "".join(f"{code}\n" for code in codes)
    checked(page, problems, "recovery-codes")

    page.get_by_role("button", name="Log out").click()
    page.goto("/accounts/login/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", PASSWORD)
    page.get_by_role("button", name=re.compile("log in", re.I)).click()
    expect(page.get_by_role("heading", name="Your code")).to_be_visible()
    checked(page, problems, "code-step")
    page.get_by_role("textbox", name="Code").fill(used)  # the same 30 s as the set-up
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_text("That code was just used: wait for the next code")).to_be_visible()
    expect(page.get_by_role("textbox", name="Code")).to_have_value("")  # the next code is not appended
    page.get_by_role("textbox", name="Code").fill("000000")
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_text("That code is not right")).to_be_visible()
    page.get_by_role("textbox", name="Code").fill(app_code(alice))
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_role("button", name="Log out")).to_be_visible()

    page.get_by_role("button", name="Log out").click()  # with a recovery code: how many are left
    page.goto("/accounts/login/")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", PASSWORD)
    page.get_by_role("button", name=re.compile("log in", re.I)).click()
    page.get_by_role("textbox", name="Code").fill(codes[0])
    page.get_by_role("button", name="Log in").click()
    expect(page.get_by_text("You logged in with a recovery code: 9 recovery codes left")).to_be_visible()
    assert problems == []
    assert pages.console_errors == []
