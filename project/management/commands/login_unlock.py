"""`manage.py login_unlock [USERNAME] [--address A]`: lift the log-in limits of an account and/or address."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.core.management.base import BaseCommand, CommandError

from project.identity.login_limits import login_limits_clear

if TYPE_CHECKING:
    from django.core.management.base import CommandParser


class Command(BaseCommand):
    help = (
        "Lift log-in limits early: the account's budget for browsers without its device cookie (USERNAME), "
        "the address's lock (--address), and with both, the account's failures from that address."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username", nargs="?", default="")
        parser.add_argument("--address", default="", help="client address as the site sees it (IPv6: any in the /64)")

    def handle(self, *args: Any, username: str, address: str, **options: Any) -> None:
        if not username and not address:
            raise CommandError("Give a username, an --address, or both.")
        login_limits_clear(username=username, address=address)
        self.stdout.write(f"Unlocked {' from '.join(part for part in (username, address) if part)}.")
