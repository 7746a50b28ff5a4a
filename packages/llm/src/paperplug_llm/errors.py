"""Errors every backend raises, so callers catch one family whatever the model behind it."""

from __future__ import annotations


class LLMError(RuntimeError):
    """Base class of this package's backend errors."""


class LLMHTTPError(LLMError):
    """The server answered with an HTTP error status (after the allowed retries)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status


class LLMTimeoutError(LLMError, TimeoutError):
    """No byte arrived within the timeout (after the allowed retries)."""


class LLMResponseError(LLMError, ValueError):
    """The reply is not JSON, or is JSON without the fields an OpenAI-style reply has."""
