"""A local stand-in for a browser vendor's push service (RFC 8030), for tests and benchmarks.

It hands out subscriptions the way a browser would (an endpoint of its own and the keys a push
is encrypted to, keeping the private halves), and for each POST to an endpoint: checks the VAPID
`Authorization` (RFC 8292: the JWT's ES256 signature with the key it names, which must be the
site's, its `aud` and `exp`), decrypts the body with the subscription's private key and auth
secret (`http-ece`, aes128gcm), records the headers and the payload, and answers what the test
asked for that endpoint (201 by default; a list of statuses is used up one per POST).
"""

from __future__ import annotations

import base64
import json
import os
import threading
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import http_ece
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import Vapid02


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class Received:
    token: str
    headers: dict[str, str]
    payload: dict[str, Any]
    status: int
    at: float = 0.0  # epoch seconds it arrived (bench/push.py's latencies)


@dataclass
class Browser:
    """One subscription: what `PushSubscription.toJSON()` gives, and the private halves."""

    token: str
    endpoint: str
    private_key: ec.EllipticCurvePrivateKey
    auth: bytes

    def to_json(self) -> dict[str, Any]:
        public = self.private_key.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint
        )
        return {
            "endpoint": self.endpoint,
            "expirationTime": None,
            "keys": {"p256dh": b64url(public), "auth": b64url(self.auth)},
        }


@dataclass
class PushService:
    """The stand-in's state: subscriptions, what each endpoint received, what to answer."""

    base: str = ""
    vapid_public_key: str = ""  # the site's: a push signed by another key is refused (403)
    browsers: dict[str, Browser] = field(default_factory=dict)
    answers: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    received: list[Received] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (token, why)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def subscribe(self) -> Browser:
        token = os.urandom(12).hex()
        browser = Browser(token, f"{self.base}/push/{token}", ec.generate_private_key(ec.SECP256R1()), os.urandom(16))
        self.browsers[token] = browser
        return browser

    def answer(self, browser: Browser, *statuses: int) -> None:
        """The next POSTs to `browser`'s endpoint are answered these statuses, in order (then 201)."""
        with self.lock:
            self.answers[browser.token].extend(statuses)

    def delivered(self, browser: Browser | None = None) -> list[Received]:
        """What the service took (201) for `browser` (or for every endpoint)."""
        return [one for one in self.received if one.status == 201 and (browser is None or one.token == browser.token)]

    def counts(self) -> Counter[str]:
        """Pushes taken (201) per endpoint token."""
        return Counter(one.token for one in self.received if one.status == 201)

    def handle(self, token: str, headers: dict[str, str], body: bytes) -> int:
        browser = self.browsers.get(token)
        if browser is None:
            return 404
        why = self._refusal(headers)
        if why:
            with self.lock:
                self.refused.append((token, why))
            return 403 if "Authorization" in why else 400
        try:
            plain = http_ece.decrypt(
                body, private_key=browser.private_key, auth_secret=browser.auth, version="aes128gcm"
            )
            payload = json.loads(plain)
        except Exception as error:  # the test asserts nothing was refused
            with self.lock:
                self.refused.append((token, f"decrypt: {error}"))
            return 400
        with self.lock:
            queued = self.answers.get(token) or []
            status = queued.pop(0) if queued else 201
            self.received.append(Received(token, headers, payload, status, at=time.time()))
        return status

    def _refusal(self, headers: dict[str, str]) -> str:
        if headers.get("content-encoding") != "aes128gcm":
            return f"Content-Encoding {headers.get('content-encoding')!r}"
        if not headers.get("ttl", "").isdigit():
            return "no TTL"
        auth = headers.get("authorization", "")
        try:
            scheme, rest = auth.split(" ", 1)
            parts = dict(part.split("=", 1) for part in rest.split(","))
            if scheme.lower() != "vapid" or not Vapid02.verify(auth):
                return "Authorization: bad VAPID signature"
        except Exception as error:
            return f"Authorization: {error}"
        if self.vapid_public_key and parts["k"] != self.vapid_public_key:
            return "Authorization: not the site's key"
        claims = json.loads(b64url_decode(parts["t"].split(".")[1]))
        if claims.get("aud") != self.base:
            return f"Authorization: aud {claims.get('aud')!r}"
        if int(claims.get("exp", 0)) < time.time() or not str(claims.get("sub", "")).startswith(("mailto:", "https:")):
            return "Authorization: exp or sub"
        return ""


def push_service_start(*, vapid_public_key: str = "") -> tuple[PushService, ThreadingHTTPServer]:
    """Serve a stand-in on a free port of 127.0.0.1 (a daemon thread); `server.shutdown()` stops it."""
    service = PushService(vapid_public_key=vapid_public_key)

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            token = self.path.rsplit("/", 1)[-1]
            status = service.handle(token, {key.lower(): value for key, value in self.headers.items()}, body)
            self.send_response(status)
            if status == 429:
                self.send_header("Retry-After", "1")
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    service.base = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return service, server
