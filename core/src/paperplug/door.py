"""The door of a local JSON API server: what a web page that the user opens can make the
browser send is refused before any handler runs (Jupyter's and Ollama's rules).

Without asking the server, a page can POST a body declared `text/plain` or a form (a CORS
"simple request"), send it from its own origin, and, by DNS rebinding, reach a loopback server
under a host name of its own. None of this needs a key on a keyless local server. So a request
is refused when its `Host` is not a name the server serves (403), when a browser says it comes
from an origin that is not allowed (403), and when a POST's body is not declared
`application/json` (415), which no page can send to another origin without a preflight that
this door answers only for allowed origins. Headers are read with `.get(lowercase name)`, as
both Starlette's `Headers` and `http.server`'s message offer.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
ANY = "*"
ALLOWED_METHODS = "GET, POST, OPTIONS"


@dataclass(frozen=True)
class Refusal:
    """Why the door refused a request: the HTTP status, a message, the header it names."""

    status: int
    message: str
    param: str


def host_name(host: str) -> str:
    """The name in a `Host` header, without its port or a trailing dot, lower-cased."""
    host = host.strip().lower()
    if host.startswith("["):
        name = host[1 : host.find("]")] if "]" in host else host[1:]
    elif host.count(":") == 1:
        name = host.split(":", 1)[0]
    else:
        name = host
    return name.rstrip(".")


def _is_loopback_ip(name: str) -> bool:
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def served_hosts(bind_host: str, extra: Iterable[str] = ()) -> tuple[str, ...]:
    """The names a server bound to `bind_host` answers to: the loopback names, the address
    itself, and `extra`; a wildcard bind (0.0.0.0, ::) without `extra` answers to any name."""
    extra = tuple(host_name(h) if h != ANY else ANY for h in extra)
    if bind_host in ("", "0.0.0.0", "::") and not extra:
        return (ANY,)
    own = () if bind_host in ("", "0.0.0.0", "::") else (host_name(bind_host),)
    return tuple(dict.fromkeys((*LOOPBACK_NAMES, *own, *extra)))


@dataclass(frozen=True)
class Door:
    """The checks, for a server that answers to `hosts` and lets the browser origins in
    `origins` call it (each `scheme://host[:port]`; `"*"` in either allows any), sending the
    request headers in `allow_headers`."""

    hosts: tuple[str, ...] = LOOPBACK_NAMES
    origins: tuple[str, ...] = ()
    allow_headers: tuple[str, ...] = ("authorization", "content-type")

    def __post_init__(self) -> None:
        for name, value in (("hosts", self.hosts), ("origins", self.origins)):
            if isinstance(value, str) or not all(isinstance(v, str) for v in value):
                raise TypeError(f"{name} must be a sequence of strings, got {value!r}")
        object.__setattr__(self, "hosts", tuple(host_name(h) for h in self.hosts))
        object.__setattr__(
            self, "origins", tuple(o.strip().lower().rstrip("/") for o in self.origins)
        )

    def host_allowed(self, host: str | None) -> bool:
        """A request without `Host` (HTTP/1.0) cannot come from a browser; else the name
        must be served (a loopback address literal is when the loopback names are)."""
        if host is None or ANY in self.hosts:
            return True
        name = host_name(host)
        return name in self.hosts or ("127.0.0.1" in self.hosts and _is_loopback_ip(name))

    def origin_allowed(self, origin: str, host: str | None) -> bool:
        """An allowed origin, or the server's own (same scheme-less host and port)."""
        origin = origin.strip().lower().rstrip("/")
        if ANY in self.origins or origin in self.origins:
            return True
        scheme, _, rest = origin.partition("://")
        return scheme in ("http", "https") and host is not None and rest == host.strip().lower()

    def check(self, method: str, headers: Mapping[str, str]) -> Refusal | None:
        """The refusal of a request with this method and these headers, or None."""
        host = headers.get("host")
        if not self.host_allowed(host):
            return Refusal(
                403,
                f"Host {host!r} is not a name this server answers to (DNS rebinding); "
                "add it to the allowed hosts if it is yours",
                "host",
            )
        origin = headers.get("origin")
        if origin is not None and not self.origin_allowed(origin, host):
            return Refusal(
                403,
                f"requests from the web origin {origin!r} are not allowed; "
                "add it to the allowed origins if it is yours",
                "origin",
            )
        if origin is None and headers.get("sec-fetch-site") == "cross-site":
            return Refusal(403, "cross-site browser requests are not allowed", "sec-fetch-site")
        if method.upper() == "POST":
            kind = (headers.get("content-type") or "").split(";", 1)[0].strip().lower()
            if kind != "application/json":
                return Refusal(
                    415,
                    f"Content-Type must be application/json, got {kind or 'none'!r}",
                    "content-type",
                )
        return None

    def cors_headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        """CORS response headers for an allowed cross-origin request (none for others)."""
        origin = headers.get("origin")
        if origin is None or not self.origin_allowed(origin, headers.get("host")):
            return {}
        return {"access-control-allow-origin": origin, "vary": "Origin"}

    def preflight_headers(self, headers: Mapping[str, str]) -> dict[str, str]:
        """The answer to an allowed origin's `OPTIONS` preflight."""
        return {
            **self.cors_headers(headers),
            "access-control-allow-methods": ALLOWED_METHODS,
            "access-control-allow-headers": ", ".join(self.allow_headers),
            "access-control-max-age": "600",
        }
