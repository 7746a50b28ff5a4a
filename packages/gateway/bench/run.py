"""Benchmark: the gateway's added latency beside LiteLLM's proxy (not written yet)."""

from paperplug_gateway.embedded import scripted_upstream

if __name__ == "__main__":
    raise SystemExit(f"not written yet: {scripted_upstream.__name__}")
