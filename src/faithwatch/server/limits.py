"""Pure ASGI middleware that answers before the body is read: the request-size limit (413 on Content-Length, or as
soon as a streamed body exceeds it), and access control (Host allowlist against DNS rebinding, optional API key)."""

from __future__ import annotations

import hmac
import json
from collections.abc import Sequence
from urllib.parse import unquote_to_bytes

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from faithwatch.errors import InputError
from faithwatch.text.visible import is_blank


class BodyLimitMiddleware:
    """Answer 413 (JSON) to any HTTP request whose body is larger than ``max_body_bytes``."""

    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def _reject(self, send: Send, size: int | None) -> None:
        body = json.dumps({"error": "request_too_large", "max_body_bytes": self.max_body_bytes,
                           "message": f"the request body is larger than {self.max_body_bytes} bytes"
                           + ("" if size is None else f" ({size} bytes)")}).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, or answer 413 once its declared or streamed body is over the limit."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", []):
            if name == b"content-length":
                try:
                    size = int(value)
                except ValueError:
                    size = None
                if size is not None and size > self.max_body_bytes:
                    await self._reject(send, size)
                    return
        received = 0
        exceeded = False
        answered = False

        async def limited_receive() -> Message:
            # past the limit the app sees a disconnect (so it stops reading) and its answer is replaced by 413
            nonlocal received, exceeded
            if exceeded:
                return {"type": "http.disconnect"}
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    exceeded = True
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal answered
            if exceeded:
                if not answered:
                    answered = True
                    await self._reject(send, None)
                return
            await send(message)

        await self.app(scope, limited_receive, guarded_send)
        if exceeded and not answered:
            await self._reject(send, None)


# --- access: Host-header allowlist and API key ------------------------------------------------------------------

#: the Host names accepted by default when the server listens on a loopback address
LOCAL_HOSTS: tuple[str, ...] = ("localhost", "127.0.0.1", "[::1]")
#: the cookie that carries the API key for the web page (set by ``POST /login``)
KEY_COOKIE = "faithwatch_api_key"


def _host_name(value: str) -> str:
    """The name part of a Host header or an allowlist entry, lowercased, without port or trailing dot.

    ``example.org:8080`` -> ``example.org``; ``[::1]:8080`` -> ``[::1]``; a bare IPv6 address gets brackets.
    """
    value = value.strip().lower()
    if value.startswith("["):
        end = value.find("]")
        name = value if end < 0 else value[: end + 1]
    elif value.count(":") > 1:  # a bare IPv6 address (allowlist entries only; Host headers bracket it)
        name = f"[{value}]"
    else:
        name = value.partition(":")[0]
    return name.rstrip(".")


def is_loopback(host: str) -> bool:
    """Whether a bind address is a loopback address (``localhost``, 127.0.0.0/8, ``::1``)."""
    import ipaddress

    name = host.strip().strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def default_allowed_hosts(bind_host: str) -> list[str] | None:
    """The default Host allowlist of a server listening on ``bind_host``: the localhost names when it is a
    loopback address (plus the address itself), ``None`` (any host) otherwise."""
    if not is_loopback(bind_host):
        return None
    names = list(LOCAL_HOSTS)
    own = _host_name(bind_host)
    if own not in names:
        names.append(own)
    return names


def parse_allowed_hosts(value: str | None) -> list[str] | None:
    """``--allowed-hosts`` (comma-separated) as a list; ``*`` anywhere means any host (``None``)."""
    if value is None:
        return None
    names = [v.strip() for v in value.split(",") if v.strip()]
    if not names:
        raise ValueError("--allowed-hosts names no host (use '*' to allow any)")
    return None if "*" in names else names


def _json_error(status: int, error: str, message: str, headers: list[tuple[bytes, bytes]] | None = None
                ) -> tuple[dict, dict]:
    body = json.dumps({"error": error, "message": message}).encode()
    start = {"type": "http.response.start", "status": status,
             "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                         *(headers or [])]}
    return start, {"type": "http.response.body", "body": body}


def check_api_key(api_key: str | None) -> str | None:
    """``api_key`` unless it is given but blank (whitespace or invisible characters only): a key nobody can type
    is refused with an :class:`InputError`, for ``faithwatch serve`` and ``faithwatch proxy`` alike."""
    if api_key is not None and is_blank(api_key):
        raise InputError("the API key is empty (--api-key or FAITHWATCH_API_KEY); give a non-empty key or none")
    return api_key


def key_matches(authorization: str, api_key: str) -> bool:
    """Whether an ``Authorization`` header carries ``Bearer <api_key>``, compared in constant time."""
    return hmac.compare_digest(authorization.encode("utf-8"), f"Bearer {api_key}".encode())


class AccessMiddleware:
    """Refuse requests whose Host header is not allowed (DNS rebinding) and, with an API key, ``/v1/*`` requests
    that do not carry it — before the body is read.

    ``allowed_hosts``: names (``example.org``, ``127.0.0.1``, ``[::1]``; a port is ignored; ``*.example.org``
    matches any subdomain) or ``None`` for any host: others get **403** ``host_not_allowed``.
    ``api_key``: every path under ``protected_prefix`` needs ``Authorization: Bearer <key>`` or the
    :data:`KEY_COOKIE` cookie holding the key; without it **401** ``unauthorized``. Keys are compared with
    :func:`hmac.compare_digest`.
    """

    def __init__(self, app: ASGIApp, api_key: str | None = None, allowed_hosts: Sequence[str] | None = None,
                 protected_prefix: str = "/v1") -> None:
        self.app = app
        self.key = None if api_key is None else api_key.encode("utf-8")
        names = None if allowed_hosts is None else [_host_name(h) for h in allowed_hosts if h.strip()]
        self.any_host = names is None or "*" in names
        self.exact = set() if names is None else {n for n in names if not n.startswith("*.")}
        self.suffixes = () if names is None else tuple(n[1:] for n in names if n.startswith("*."))
        self.prefix = protected_prefix.rstrip("/")

    def host_allowed(self, header: bytes | None) -> bool:
        """Whether a Host header names an allowed host."""
        if self.any_host:
            return True
        if not header:
            return False
        name = _host_name(header.decode("latin-1"))
        return name in self.exact or any(name.endswith(s) and len(name) > len(s) for s in self.suffixes)

    def key_given(self, authorization: bytes | None, cookie: bytes | None) -> bool:
        """Whether the request gives the API key, as a Bearer token or in the key cookie."""
        assert self.key is not None
        ok = False
        if authorization:
            scheme, _, token = authorization.strip().partition(b" ")
            ok = scheme.lower() == b"bearer" and hmac.compare_digest(token.strip(), self.key)
        if not ok and cookie:
            for part in cookie.split(b";"):
                name, _, value = part.strip().partition(b"=")
                if name == KEY_COOKIE.encode() and hmac.compare_digest(unquote_to_bytes(value.strip(b'"')),
                                                                       self.key):
                    ok = True
        return ok

    def protected(self, scope: Scope) -> bool:
        """Whether the path needs the API key (the protected prefix and below)."""
        path = scope.get("path", "")
        root = scope.get("root_path", "")
        if root and path.startswith(root):
            path = path[len(root):]
        return path == self.prefix or path.startswith(self.prefix + "/")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on, or answer 403 for another host and 401 without the key on a protected path."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", []))  # the last of repeated headers; Host is never repeated
        if not self.host_allowed(headers.get(b"host")):
            start, body = _json_error(403, "host_not_allowed", "this server does not answer to the Host "
                                      f"{headers.get(b'host', b'').decode('latin-1')!r} (see --allowed-hosts)")
            await send(start)
            await send(body)
            return
        if self.key is not None and self.protected(scope) and not self.key_given(
                headers.get(b"authorization"), headers.get(b"cookie")):
            start, body = _json_error(401, "unauthorized", "this server needs an API key: send "
                                      "'Authorization: Bearer <key>' (in a browser, open /login once)",
                                      [(b"www-authenticate", b'Bearer realm="faithwatch"')])
            await send(start)
            await send(body)
            return
        await self.app(scope, receive, send)
