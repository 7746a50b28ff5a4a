"""The streaming monitor (paper §4.3): the Defense at stage "output".

Only the backbone and the token head run at inference, one KV-cache step per new token. Text
from any LLM is re-tokenised with SCM's own tokenizer (`retokenisation.py`): the trailing
partial word is held back, and only a bounded tail around the last word boundary is
re-tokenised, the KV cache rolling back over that tail alone, so a word costs the same at
the 4000th word as at the 10th. Each conversation has its own `MonitorSession` (prompt, text,
KV cache, counts): `monitor.session(conversation_id)`, or `context["conversation_id"]` in
`check`, so interleaved streams never recompute each other. A model with a `frame` reads the
prompt and the previous frame anew into an empty cache at each frame start (`model.py`).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Hashable, Mapping
from dataclasses import asdict, dataclass
from typing import Any

import torch
from paperplug_llm.likelihood import crop_cache

from paperplug import Verdict
from paperplug.checks import check_choice, check_context, check_scalar, check_sequence, check_type
from paperplug_scm.batching import StepBatcher
from paperplug_scm.checkpoint import load_checkpoint
from paperplug_scm.fineharm import encode_prompt
from paperplug_scm.model import HEADS, SCMModel, context_start
from paperplug_scm.retokenisation import (
    IncrementalTokens,
    check_tokenizer,
    hold_back,
    tail_retokenisation_is_exact,
)
from paperplug_scm.stopping import RULES, DelayKCounter, check_rule

RETOKENISE = ("auto", "tail", "full")


@dataclass
class Decision:
    """The monitor's state after a push: stop or go, and how much it has read."""

    stop: bool
    score: float  # P(harmful) of the last token read
    max_score: float
    n_flagged: int  # tokens the rule counts (scored >= theta; in the window if there is one)
    tokens_read: int  # response tokens scored (up to the stopping token)
    stop_index: int | None  # 0-based response token at which the rule fired
    judged: int  # characters of the response judged (the held-back word excluded)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_hashable(conversation_id: Any) -> None:
    """A conversation's id must be hashable (it keys the monitor's streams)."""
    try:
        hash(conversation_id)
    except TypeError:
        kind = type(conversation_id).__name__
        raise TypeError(f"conversation_id must be hashable, got {kind}") from None


def prompt_of(context: Mapping[str, Any]) -> str:
    """The prompt a reply answers: `context["prompt"]`, else the last user message of
    `context["messages"]` (what `guard.wrap` passes), else ""."""
    check_type(context, "context", Mapping, what="a mapping (prompt or messages)")
    prompt = context.get("prompt")
    if prompt is None:
        messages = check_sequence(context.get("messages") or (), "context['messages']", min_len=0)
        for i, m in enumerate(messages):
            check_type(m, f"context['messages'][{i}]", Mapping, what="a mapping (role, content)")
        users = [m for m in messages if m.get("role") == "user"]
        prompt = users[-1].get("content", "") if users else ""
    return check_type(prompt, "context['prompt']", str)


class MonitorSession:
    """One stream under the monitor: `start(prompt)`, then `push(text)` (or `push_ids`), then
    `finish()` at the end of the stream; `decision` says whether to stop."""

    def __init__(self, monitor: StreamingMonitor) -> None:
        self.monitor = check_type(monitor, "monitor", StreamingMonitor)
        self.start("")

    def start(self, prompt: str = "") -> MonitorSession:
        """Reset for a new response to `prompt` and prefill the prompt into the KV cache."""
        check_type(prompt, "prompt", str)
        mon = self.monitor
        self.prompt, self.text, self.ended = prompt, "", False
        self.ids: list[int] = []  # response token ids fed to the model
        self.token_scores: list[float] = []
        self._max_before: list[float] = [0.0]  # _max_before[i] = max(token_scores[:i], 0)
        self._counter = DelayKCounter(mon.theta, mon.k_effective, mon.window)
        self._tokens = IncrementalTokens(mon.tokenizer, mon.retokenise_mode)
        self._by_ids = False  # fed token ids (push_ids) rather than text
        self.stop_index: int | None = None
        self.cache: Any = None
        self._context = 0  # the cache holds the prompt and ids[self._context:]
        self.prompt_ids = encode_prompt(mon.tokenizer, prompt)
        if self.prompt_ids:
            self._step(self.prompt_ids)
        return self

    @property
    def judged(self) -> int:
        """Characters of the response judged so far (the rest is the held-back word)."""
        return len(self.text) if self._by_ids else self._tokens.end

    @torch.no_grad()
    def _step(self, ids: list[int]) -> list[float]:
        mon = self.monitor
        if mon.batcher is not None:  # joins the other streams' steps (batching.py)
            hidden, self.cache = mon.batcher.step(self.cache, ids)
            return mon.model.scores(hidden, mon.head).tolist()
        inputs = torch.tensor([ids], device=mon.model.device)
        hidden, self.cache = mon.model.hidden(inputs, cache=self.cache, use_cache=True)
        return mon.model.scores(hidden[0], mon.head).tolist()

    def _rollback(self, keep: int) -> None:
        """Forget response tokens from index `keep` on (their text was re-tokenised)."""
        del self.ids[keep:], self.token_scores[keep:], self._max_before[keep + 1 :]
        self._counter.truncate(keep)
        if keep >= self._context:
            self.cache = crop_cache(self.cache, len(self.prompt_ids) + keep - self._context)
        else:  # back into an earlier frame: the next token's frame is read anew
            self.cache, self._context = None, -1

    def _reframe(self, context: int) -> None:
        """Read the prompt and ids[context:] anew into an empty cache (a new frame)."""
        self.cache, self._context = None, context
        if self.prompt_ids or self.ids[context:]:
            self._step(self.prompt_ids + self.ids[context:])

    def _feed(self, ids: list[int]) -> None:
        frame = self.monitor.model.frame
        while ids:
            start = len(self.ids)
            context = context_start(start, frame)
            if context != self._context:
                self._reframe(context)
            n = len(ids) if frame is None else min(len(ids), frame - start % frame)
            for i, s in enumerate(self._step(ids[:n])):
                self.ids.append(ids[i])
                self.token_scores.append(s)
                self._max_before.append(max(self._max_before[-1], s))
                if self._counter.update(s):
                    self.stop_index = start + i
                    self.cache = None  # a stop is final: the cache is no longer needed
                    return
            ids = ids[n:]

    def _judge_to(self, end: int, boundary: bool) -> None:
        keep, new = self._tokens.update(self.text, end, boundary)
        if keep < len(self.ids):
            self._rollback(keep)
        self._feed(new)

    def _open(self, by_ids: bool) -> bool:
        if self.ended:
            raise ValueError("this stream has ended (finish() was called): start() a new one")
        if self.text and by_ids != self._by_ids:
            raise ValueError("feed a stream either by push(text) or by push_ids(ids), not both")
        self._by_ids = by_ids
        return self.stop_index is None

    def push(self, text_delta: str) -> Decision:
        """Append streamed text; score every completed word's tokens; return the decision."""
        check_type(text_delta, "text_delta", str)
        if self._open(False) and text_delta:
            self.text += text_delta
            end, boundary = hold_back(self.text, self._tokens.end, self.monitor.max_hold)
            if end > self._tokens.end:
                self._judge_to(end, boundary)
        elif text_delta:
            self.text += text_delta
        return self.decision

    def push_ids(self, ids: list[int]) -> Decision:
        """Feed response token ids directly (the watched model shares SCM's tokenizer)."""
        ids = check_sequence(ids, "ids", min_len=0)
        high = len(self.monitor.tokenizer) - 1  # an id the tokenizer has
        ids = [check_scalar(i, f"ids[{j}]", "int", low=0, high=high) for j, i in enumerate(ids)]
        if self._open(True):
            self._feed(ids)
        self.text += self.monitor.tokenizer.decode(ids)
        return self.decision

    def finish(self) -> Decision:
        """The stream ended: score the held-back trailing word too."""
        open_text = not self.ended and self.stop_index is None and not self._by_ids
        if open_text and len(self.text) > self._tokens.end:
            self._judge_to(len(self.text), False)
        self.ended, self.cache = True, None
        return self.decision

    @property
    def decision(self) -> Decision:
        stop = self.stop_index is not None
        read = self.stop_index + 1 if stop else len(self.token_scores)
        return Decision(
            stop=stop,
            score=self.token_scores[read - 1] if read else 0.0,
            max_score=self._max_before[read],
            n_flagged=self._counter.n_flagged,
            tokens_read=read,
            stop_index=self.stop_index,
            judged=self.judged,
        )


class StreamingMonitor:
    """Scores a response token by token and stops it by the naive or delay-k rule.

    `window=None` is the paper's cumulative delay-k; an integer counts flagged tokens among
    the last `window` only (see `stopping.py`). `max_hold`: characters without whitespace
    held back before they are judged anyway. `retokenise`: "tail" (bounded re-tokenisation),
    "full" (the whole prefix at each word), or "auto" (tail where it is exact for this
    tokenizer, see `retokenisation.py`). Up to `max_sessions` conversations are followed at
    once; the least recently used is dropped beyond that (it restarts from its text).
    `batch=True` (a server's many streams, e.g. paperplug-gateway's): the KV-cache steps of
    streams checked at once from several threads run as one forward pass (`batching.py`)."""

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
        window: int | None = None,
        head: str = "token",
        max_hold: int | None = 64,
        retokenise: str = "auto",
        max_sessions: int = 256,
        batch: bool = False,
    ) -> None:
        check_type(model, "model", SCMModel)
        self.rule = check_choice(rule, "rule", RULES)
        self.theta, _, self.window = check_rule(theta, 1 if rule == "naive" else k, window)
        self.k = check_scalar(k, "k", "int", low=1)
        self.head = check_choice(head, "head", HEADS)
        self.retokenise = check_choice(retokenise, "retokenise", RETOKENISE)
        self.max_hold = check_scalar(max_hold, "max_hold", "int", low=1, allow_none=True)
        self.max_sessions = check_scalar(max_sessions, "max_sessions", "int", low=1)
        self.model, self.tokenizer = model.eval(), check_tokenizer(tokenizer)
        if retokenise == "auto":
            exact = tail_retokenisation_is_exact(tokenizer)
            self.retokenise_mode = "tail" if exact else "full"
        else:
            self.retokenise_mode = retokenise
        self._sessions: OrderedDict[Hashable, MonitorSession] = OrderedDict()
        self._lock = threading.Lock()
        check_type(batch, "batch", bool)
        self.batcher = StepBatcher(self.model) if batch else None

    @classmethod
    def from_pretrained(cls, path: str | os.PathLike[str], **kw: Any) -> StreamingMonitor:
        """The monitor of an `SCMTrainer.save` checkpoint: its θ, k (and window) unless
        overridden; `device=` places the model."""
        model, tokenizer, settings = load_checkpoint(path, device=kw.pop("device", None))
        opts = {"theta": settings["theta_"], "k": settings["k_"], "head": settings["head"]}
        opts["window"] = settings.get("window")
        return cls(model, tokenizer, **{**opts, **kw})

    @property
    def k_effective(self) -> int:
        return 1 if self.rule == "naive" else self.k

    # -- sessions -------------------------------------------------------------------------

    def session(self, conversation_id: Hashable = None) -> MonitorSession:
        """The stream of one conversation (created on first use); None is the default one
        that `start`/`push`/`finish` follow."""
        check_hashable(conversation_id)
        with self._lock:
            found = self._sessions.get(conversation_id)
            if found is None:
                found = self._sessions[conversation_id] = MonitorSession(self)
                while len(self._sessions) > self.max_sessions:
                    self._sessions.popitem(last=False)
            self._sessions.move_to_end(conversation_id)
            return found

    def end_session(self, conversation_id: Hashable = None) -> None:
        """Forget a conversation's stream (its KV cache is freed)."""
        check_hashable(conversation_id)
        with self._lock:
            self._sessions.pop(conversation_id, None)

    def start(self, prompt: str = "") -> MonitorSession:
        """Start the default stream (see `MonitorSession.start`)."""
        return self.session().start(prompt)

    def push(self, text_delta: str) -> Decision:
        return self.session().push(text_delta)

    def push_ids(self, ids: list[int]) -> Decision:
        return self.session().push_ids(ids)

    def finish(self) -> Decision:
        return self.session().finish()

    @property
    def decision(self) -> Decision:
        return self.session().decision

    # -- the Defense role -----------------------------------------------------------------

    def check(self, payload: Any, context: Mapping[str, Any] | None = None) -> Verdict:
        """Defense protocol: `payload` is the response so far.

        The prompt comes from `context["prompt"]` or `context["messages"]`, the stream from
        `context["reply_id"]` (what paperplug-gateway sets per streamed reply), else
        `context["conversation_id"]` (default: one stream). A payload that extends the
        stream's text under the same prompt continues it; anything else starts it anew.
        `context["final"]` ends the stream and scores the trailing word too. The verdict's
        `details["judged"]` says how many characters were judged, so `guard.stream` holds
        the rest back."""
        check_type(payload, "payload", str, what="the reply text so far (str)")
        context = check_context(context)
        prompt = prompt_of(context)
        session = self.session(context.get("reply_id", context.get("conversation_id")))
        if (
            prompt != session.prompt
            or session._by_ids
            or not payload.startswith(session.text)
            or (session.ended and payload != session.text)
        ):
            session.start(prompt)
        if not session.ended:
            session.push(payload[len(session.text) :])
        decision = session.finish() if context.get("final") else session.decision
        reason = (
            f"{decision.n_flagged} tokens scored >= {self.theta} (k={self.k_effective}"
            + (f" in a window of {self.window})" if self.window else ")")
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
