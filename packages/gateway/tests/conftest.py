"""One thread, no progress bars; a scripted upstream and a gateway served on loopback ports."""

import contextlib
import os

import pytest
from paperplug_gateway import create_app, parse_config, serve_in_thread
from paperplug_gateway.embedded import register_regex_guard, scripted_upstream

os.environ.setdefault("PAPERPLUG_PROGRESS", "0")


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    from paperplug.harness import single_thread

    single_thread()
    register_regex_guard()


@pytest.fixture
def serve():
    """serve(app) -> base URL; every server started in the test stops at its end."""
    with contextlib.ExitStack() as stack:
        yield lambda app: stack.enter_context(serve_in_thread(app))


@pytest.fixture
def gateway(serve):
    """gateway(reply=..., fault=..., defense=[...], **server keys) -> (gateway URL, upstream URL)."""

    def start(reply=None, *, fault=None, defense=(), upstream=None, audit=None, **server):
        kw = {k: v for k, v in (("fault", fault),) if v is not None}
        up = serve(scripted_upstream(reply, **kw) if reply else scripted_upstream(**kw))
        raw = {
            "upstream": {"url": up, **(upstream or {})},
            "defense": list(defense),
            "server": server,
        }
        if audit:
            raw["audit"] = audit
        return serve(create_app(parse_config(raw))), up

    return start
