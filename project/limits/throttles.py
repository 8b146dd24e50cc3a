"""DRF throttles counted in the shared limit store (project/limits/store.py), not in a per-process cache.

The scopes and rates are DRF's own setting (REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]:
`anon`, `user`, `live`); a refusal is DRF's 429 with Retry-After. Anonymous callers are
counted by address (project.http.security.client_ip, IPv6 by /64), accounts by id.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from django.conf import settings
from rest_framework.settings import api_settings
from rest_framework.throttling import BaseThrottle

from project.http.security import client_ip

if TYPE_CHECKING:
    from rest_framework.request import Request
    from rest_framework.views import APIView


class StoreRateThrottle(BaseThrottle):
    scope: str = ""

    def block(self, rate: str) -> int:
        """Units leased per DynamoDB write (project.limits.store): 1, counted one by one."""
        return 1

    def subject(self, request: Request) -> str | None:
        """Who is counted; None: this throttle does not apply to the request."""
        from project.limits.store import address_subject  # DRF imports this module while project.errors loads

        if request.user and request.user.is_authenticated:
            return f"user:{request.user.pk}"
        return f"address:{address_subject(client_ip(request))}"

    def allow_request(self, request: Request, view: APIView) -> bool:
        self.retry_after: float | None = None
        # DRF's rates are "N/period" strings (djangorestframework-stubs say numbers).
        rate = cast(str | None, api_settings.DEFAULT_THROTTLE_RATES.get(self.scope))
        subject = self.subject(request)
        if not rate or subject is None:
            return True
        from project.limits.store import limit_hit

        decision = limit_hit(name=f"api_{self.scope}", subject=subject, rules=rate, block=self.block(rate))
        self.retry_after = decision.retry_after
        return decision.allowed

    def wait(self) -> float | None:
        return self.retry_after


class AnonThrottle(StoreRateThrottle):
    """Anonymous callers, per address (API_THROTTLE_ANON)."""

    scope = "anon"

    def subject(self, request: Request) -> str | None:
        if request.user and request.user.is_authenticated:
            return None
        return super().subject(request)


class UserThrottle(StoreRateThrottle):
    """Signed-in callers, per account (API_THROTTLE_USER), leased 1% of the rate per write.

    Every API request of an account passes it: 1,200/min leases 12 units per write (0.08
    WCU a request); units a process leased and did not use refuse the others at most 1%
    early each.
    """

    scope = "user"

    def block(self, rate: str) -> int:
        from project.limits.store import rules_parse

        rules = rules_parse(rate)
        return max(1, rules[0].limit // 100) if len(rules) == 1 else 1

    def subject(self, request: Request) -> str | None:
        if not (request.user and request.user.is_authenticated):
            return None
        return super().subject(request)


class LiveThrottle(StoreRateThrottle):
    """The live poll, per account or address (API_THROTTLE_LIVE): leased in blocks of LIMIT_LIVE_BLOCK."""

    scope = "live"

    def block(self, rate: str) -> int:
        block: int = settings.LIMIT_LIVE_BLOCK
        return block
