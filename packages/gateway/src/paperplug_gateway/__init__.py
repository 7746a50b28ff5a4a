"""paperplug-gateway: composed paperplug defenses as an OpenAI-compatible proxy.

`paperplug-gateway serve --config gateway.toml` serves `/v1/chat/completions` (plain and
streamed, tools), `/v1/models`, `/healthz` and `/metrics`; the config names the upstream and
the defenses by their registry names. The public API is imported lazily.
"""

from paperplug import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "Gateway": ".app",
        "app_from_env": ".app",
        "create_app": ".app",
        "AuditLog": ".audit",
        "ConfigError": ".config",
        "DefenseSpec": ".config",
        "GatewayConfig": ".config",
        "UpstreamConfig": ".config",
        "load_config": ".config",
        "parse_config": ".config",
        "build_guard": ".defenses",
        "RequestError": ".request",
        "validate_request": ".request",
        "serve_in_thread": ".server",
        "Conversation": ".stages",
        "Stages": ".stages",
        "conversation_id": ".stages",
        "HTTPUpstream": ".upstream",
        "UpstreamError": ".upstream",
    },
)
