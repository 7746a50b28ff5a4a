"""The streaming monitor (paper §4.3): the Defense at stage "output".

Only the backbone and the token head run at inference, one KV-cache step per new token. Text
from any LLM is re-tokenised with SCM's own tokenizer, holding back the trailing partial word;
when re-tokenising changes earlier tokens, the cache is cropped back to the common prefix. A
call to `check` with a text that extends the previous one costs only the new tokens.
"""

from __future__ import annotations

import os
import re
from dataclasses import asdict, dataclass
from typing import Any

import torch

from paperplug import Verdict
from paperplug_scm.fineharm import encode_prompt
from paperplug_scm.model import SCMModel
from paperplug_scm.stopping import RULES, DelayKCounter, check_rule

_LAST_SPACE = re.compile(r"\s+\S*$")


@dataclass
class Decision:
    """The monitor's state after a push: stop or go, and how much it has read."""

    stop: bool
    score: float  # P(harmful) of the last token read
    max_score: float
    n_flagged: int  # tokens read so far with score >= theta
    tokens_read: int  # response tokens scored (up to the stopping token)
    stop_index: int | None  # 0-based response token at which the rule fired

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class StreamingMonitor:
    """Scores a response token by token and stops it by the naive or delay-k rule."""

    stage = "output"
    name = "scm"

    def __init__(
        self,
        model: SCMModel,
        tokenizer: Any,
        *,
        theta: float = 0.5,
        k: int = 4,
        rule: str = "delay",
        head: str = "token",
        sep: str = " ",
    ) -> None:
        if not isinstance(model, SCMModel):
            raise TypeError(f"model must be an SCMModel, got {type(model).__name__}")
        if rule not in RULES:
            raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
        check_rule(theta, k)
        if head not in ("token", "response"):
            raise ValueError(f"head must be 'token' or 'response', got {head!r}")
        self.model, self.tokenizer = model.eval(), tokenizer
        self.theta, self.k, self.rule, self.head, self.sep = float(theta), k, rule, head, sep
        self.start("")

    @classmethod
    def from_pretrained(cls, path: str | os.PathLike[str], **kw: Any) -> StreamingMonitor:
        """The monitor of an `SCMTrainer.save` checkpoint (its θ and k unless overridden)."""
        from paperplug_scm.training import SCMTrainer

        return SCMTrainer.load(path).monitor(**kw)

    @property
    def k_effective(self) -> int:
        return 1 if self.rule == "naive" else self.k

    def start(self, prompt: str = "") -> StreamingMonitor:
        """Reset for a new response to `prompt` and prefill the prompt into the KV cache."""
        if not isinstance(prompt, str):
            raise TypeError(f"prompt must be a str, got {type(prompt).__name__}")
        self.prompt, self.text = prompt, ""
        self.ids: list[int] = []  # response token ids fed to the model
        self.token_scores: list[float] = []
        self.cache: Any = None
        self._counter = DelayKCounter(self.theta, self.k_effective)
        self._stop_index: int | None = None
        self._prompt_ids = encode_prompt(self.tokenizer, prompt)
        if self._prompt_ids:
            self._step(self._prompt_ids)
        return self

    @torch.no_grad()
    def _step(self, ids: list[int]) -> list[float]:
        hidden, self.cache = self.model.hidden(
            torch.tensor([ids]), past_key_values=self.cache, use_cache=True
        )
        return self.model.scores(hidden[0], self.head).tolist()

    def _rollback(self, keep: int) -> None:
        """Forget response tokens from index `keep` on (their text was re-tokenised)."""
        self.ids, self.token_scores = self.ids[:keep], self.token_scores[:keep]
        total = len(self._prompt_ids) + keep
        if total == 0:
            self.cache = None
        elif total < self.cache.get_seq_length():
            self.cache.crop(total - self.cache.get_seq_length())  # negative: drop that many
        self._counter = DelayKCounter(self.theta, self.k_effective)
        for s in self.token_scores:
            self._counter.update(s)

    def _feed(self, ids: list[int]) -> None:
        if self._stop_index is not None or not ids:
            return
        start = len(self.ids)
        self.ids += ids
        scores = self._step(ids)
        for i, s in enumerate(scores):
            self.token_scores.append(s)
            if self._counter.update(s):
                self._stop_index = start + i
                return

    def _sync(self, committed: str) -> None:
        ids = self.tokenizer(committed, add_special_tokens=False)["input_ids"] if committed else []
        same = 0
        for a, b in zip(ids, self.ids, strict=False):
            if a != b:
                break
            same += 1
        if same < len(self.ids):
            self._rollback(same)
        self._feed(list(ids[same:]))

    def push(self, text_delta: str) -> Decision:
        """Append streamed text; score every completed word's tokens; return the decision."""
        if not isinstance(text_delta, str):
            raise TypeError(f"push takes the new text as a str, got {type(text_delta).__name__}")
        self.text += text_delta
        if self._stop_index is None:
            held = _LAST_SPACE.search(self.text)
            self._sync(self.text[: held.start()] if held else "")
        return self.decision

    def push_ids(self, ids: list[int]) -> Decision:
        """Feed response token ids directly (the watched model shares SCM's tokenizer)."""
        if any(isinstance(i, bool) or not isinstance(i, int) for i in ids):
            raise TypeError("push_ids takes a list of int token ids")
        self.text += self.tokenizer.decode(ids)
        self._feed(list(ids))
        return self.decision

    def finish(self) -> Decision:
        """The stream ended: score the held-back trailing word too."""
        if self._stop_index is None:
            self._sync(self.text)
        return self.decision

    @property
    def decision(self) -> Decision:
        stop = self._stop_index is not None
        read = self.token_scores[: self._stop_index + 1] if stop else self.token_scores
        return Decision(
            stop=stop,
            score=read[-1] if read else 0.0,
            max_score=max(read, default=0.0),
            n_flagged=self._counter.n_flagged,
            tokens_read=len(read),
            stop_index=self._stop_index,
        )

    def check(self, payload: Any, context: dict[str, Any] | None = None) -> Verdict:
        """Defense protocol: `payload` is the response so far; `context["prompt"]` the prompt.

        A payload that extends the previous one (with the same prompt) continues the stream;
        anything else starts a new one. `context["final"]` scores the trailing word too.
        """
        if not isinstance(payload, str):
            raise TypeError(f"the output stage checks text (str), got {type(payload).__name__}")
        context = dict(context or {})
        prompt = context.get("prompt", "")
        if prompt != self.prompt or not payload.startswith(self.text):
            self.start(prompt)
        decision = self.push(payload[len(self.text) :])
        if context.get("final"):
            decision = self.finish()
        reason = (
            f"{decision.n_flagged} tokens scored >= {self.theta} (k={self.k_effective})"
            if decision.stop
            else ""
        )
        return Verdict(
            payload=payload,
            valid=not decision.stop,
            risk=min(max(decision.max_score, 0.0), 1.0),
            reason=reason,
            details=decision.to_dict(),
        )
