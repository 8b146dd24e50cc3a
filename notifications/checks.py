"""System checks of the notifications settings: a bad value stops `runserver`, `migrate`
and every management command at start-up, with the setting named, instead of failing the
first request that writes a feed."""

from django.core.checks import Error, register

from notifications.feed.merge import feed_settings_errors


@register()
def feed_settings_check(app_configs, **kwargs):
    return [Error(message, id="notifications.E001") for message in feed_settings_errors()]
