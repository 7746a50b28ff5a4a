"""A user's own defense: blocks text matching a regular expression, at any stage."""

from __future__ import annotations

import re

from paperplug import Verdict, hookimpl


class RegexGuard:
    def __init__(self, pattern: str = r"(?i)password|api[_ ]key", stage: str = "output"):
        self.pattern, self.stage = re.compile(pattern), stage

    def check(self, payload, context=None) -> Verdict:
        text = payload if isinstance(payload, str) else repr(payload)
        hit = self.pattern.search(text)
        return Verdict(
            payload,
            hit is None,
            1.0 if hit else 0.0,
            reason=f"matched {hit.group(0)!r}" if hit else "",
        )


@hookimpl
def register_defenses(register):
    register(
        "regex-guard", RegexGuard, summary="block text matching a regex", paper="(user plugin)"
    )
