"""The audit log: one JSON line per defense verdict that matters (every verdict of an input,
tool or final output check, and any blocking one): time, conversation, defense, stage,
verdict, risk, reason. No message text unless the config asks for it; never a key."""

from __future__ import annotations

import json
import os
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from paperplug import GuardVerdict
from paperplug.checks import check_type


class AuditLog:
    """Appends JSON lines to `path` (None: records nothing). Thread-safe."""

    def __init__(self, path: str | None, *, log_text: bool = False) -> None:
        check_type(path, "path", (str, os.PathLike, type(None)), what="a file path or None")
        check_type(log_text, "log_text", bool)
        self.path, self.log_text = (Path(path) if path else None), log_text
        self._lock = threading.Lock()

    def record(
        self,
        conversation: str,
        stage: str,
        verdict: GuardVerdict,
        *,
        text: Any = None,
        blocking_only: bool = False,
    ) -> None:
        if self.path is None:
            return
        lines = []
        for defense, v in verdict.verdicts:
            if blocking_only and v.valid:
                continue
            entry = {
                "time": datetime.now(UTC).isoformat(timespec="milliseconds"),
                "conversation": conversation,
                "defense": defense,
                "stage": stage,
                "verdict": "pass" if v.valid else "block",
                "risk": round(float(v.risk), 4),
                "reason": v.reason,
            }
            if self.log_text and text is not None:
                entry["text"] = (
                    text if isinstance(text, str) else json.loads(json.dumps(text, default=str))
                )
            lines.append(json.dumps(entry, ensure_ascii=False))
        if lines:
            with self._lock, self.path.open("a", encoding="utf-8") as f:
                f.write("\n".join(lines) + "\n")
