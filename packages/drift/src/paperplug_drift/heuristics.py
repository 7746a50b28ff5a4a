"""LLM-free stand-ins for DRIFT's LLM stages: an injection detector driven by cues that text
addresses the agent (`HeuristicDetector`). The privilege heuristic lives in privileges.py.

A tool result is cut into units (sentences and lines). A unit is an injection cue when it
addresses the agent or tries to override its task: it speaks to "you, the assistant/model",
tells it to ignore earlier instructions, says "before you can solve the task", dictates tool
calls with arguments, poses as a system message, or opens with an "IMPORTANT!!!" / "TODO:"
order. What the detector reports for each cue: the whole tagged block around it
(`<TAG> ... </TAG>`), else the cue and the rest of its paragraph. Plain imperative sentences
without a cue are left alone: ordinary data (bills, e-mails, to-do lists) is full of them.
This is a reconstruction [R], not the paper's detector, which is an LLM.
"""

from __future__ import annotations

import re

CUES = [
    r"\b(ignore|disregard|forget|override)\s+(all\s+|any\s+)?(of\s+)?(your|the|my|these|those)?\s*(previous|prior|above|earlier|original|preceding)\b",
    r"\bimportant (message|instructions?|notice|update) (from|for)\b",
    r"\bmessage from\b[^.\n]{0,60}\bto you\b",
    r"\bto you,?\s+(the\s+)?(ai|assistant|agent|model|language model|llm|chatbot|bot|gpt|claude|gemini|llama|local model)\b",
    r"\bbefore you (can )?(solve|do|start|complete|continue|proceed|answer|finish|carry on)\b",
    r"\b(after|once) you (do|did|have done|complete|finish) (that|this|it)\b[^.\n]{0,40}\b(task|instruction)",
    r"\byou (should|must|need to|have to) (use|call|run|invoke|execute) the (tool|function)\b",
    r"\bwith the (following )?arguments\b",
    r"\bsubstitute the placeholders\b",
    r"#+\s*\(?\s*system[_ ]?(message|prompt)",
    r"\bsystem (message|prompt|override)\s*:",
    r"\bstrictly adhere to the following\b",
    r"IMPORTANT\s*!!+",
    r"(?<![A-Za-z])TODO\s*:\s*\S",
    r"\b(new|updated|real|actual) instructions?\s*:",
    r"\b(as|you are) (an?|the) (ai|assistant|agent|language model)\b[^.\n]{0,40}\b(must|should|will)\b",
]
CUE = re.compile("|".join(f"(?:{c})" for c in CUES), re.I | re.M)
TAG_BLOCK = re.compile(r"<([A-Za-z][\w-]*)\s*>(.*?)</\1\s*>", re.S)
# a paragraph ends at a blank line, or where a YAML key or list item starts the next line
PARAGRAPH_END = re.compile(r"\n\s*\n|\n(?=\s*(?:-\s+)?[A-Za-z_][\w-]{0,40}:(?:\s|$))|\n(?=\s*-\s)")
UNIT_END = re.compile(r"(?<=[.!?])\s+|\n")
YAML_KEY = re.compile(r"\s*(?:-\s+)?[A-Za-z_][\w-]{0,40}:\s*['\"]?")


class HeuristicDetector:
    """`detect(query, text) -> list[str]`: the injected passages found (exact substrings of
    `text`, longest first), or [] ("nothing found"). `query` is accepted for the detector
    protocol; cues do not depend on it."""

    def detect(self, query: str, text: str) -> list[str]:
        if not isinstance(text, str):
            raise TypeError(f"text must be a string, got {type(text).__name__}")
        # escaped newlines (a dict's repr) read as real ones; same length, so spans carry over
        plain = text.replace("\\n", "\n ")
        spans = [self._extent(plain, cue.start(), cue.end()) for cue in CUE.finditer(plain)]
        merged: list[list[int]] = []
        for start, end in sorted(spans):
            if merged and start <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        found = [text[s:e].strip() for s, e in merged]
        return sorted((f for f in found if f), key=len, reverse=True)

    @staticmethod
    def _extent(text: str, start: int, end: int) -> tuple[int, int]:
        """The tagged block holding the cue, else its unit and the rest of its paragraph."""
        for block in TAG_BLOCK.finditer(text):
            if block.start() <= start and end <= block.end():
                return block.start(), block.end()
        unit_start = 0
        for m in UNIT_END.finditer(text, 0, start):
            unit_start = m.end()
        key = YAML_KEY.match(text, unit_start, start)
        unit_start = key.end() if key else unit_start
        stop = PARAGRAPH_END.search(text, end)
        return unit_start, stop.start() if stop else len(text)
