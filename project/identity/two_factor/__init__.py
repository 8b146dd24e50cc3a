"""Optional two-factor log-in: a TOTP authenticator app (django-otp) and recovery codes.

services.py sets it up, checks codes and removes it; views.py holds the log-in's second
step (pages and the admin), the set-up page and the removal page.
"""
