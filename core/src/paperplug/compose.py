"""Compose defenses from any papers into one Guard, and measure an attack with and without it.

Payload per stage: train_data, a dataset (a defense reports `details["removed"]` and returns
the kept rows as its payload); input, the chat messages; tool, a tool call or a tool result;
decode, the decoding step the method defines; output, the text produced so far.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from paperplug.roles import STAGES, AttackResult, ChatModel, Message, Verdict, stream_chat


@dataclass
class GuardVerdict(Verdict):
    """The guard's verdict: all valid, max risk, final payload, plus one verdict per defense."""

    verdicts: list[tuple[str, Verdict]] = field(default_factory=list)


@dataclass
class FilterResult:
    """Indices into the caller's dataset: what the train_data defenses kept and removed."""

    kept: list[int]
    removed: list[int]
    verdict: GuardVerdict

    def to_dict(self) -> dict[str, Any]:
        return {"kept": self.kept, "removed": self.removed, "verdict": self.verdict.to_dict()}


def _name(defense: Any) -> str:
    return getattr(defense, "name", None) or type(defense).__name__


class Guard:
    """Defenses routed by stage; each sees the payload the previous one sanitized."""

    def __init__(self, defenses: Sequence[Any], *, fail_fast: bool = False) -> None:
        for i, d in enumerate(defenses):
            stage = getattr(d, "stage", None)
            if stage not in STAGES:
                raise TypeError(
                    f"defense #{i} ({_name(d)}) has stage {stage!r}; expected one of {STAGES}"
                )
            if not callable(getattr(d, "check", None)):
                raise TypeError(
                    f"defense #{i} ({_name(d)}) has no callable check(payload, context)"
                )
        self.defenses = list(defenses)
        self.fail_fast = fail_fast

    def stages(self) -> list[str]:
        return [s for s in STAGES if any(d.stage == s for d in self.defenses)]

    def _apply(
        self, payload: Any, stage: str, context: Mapping[str, Any] | None
    ) -> Iterator[tuple[str, Verdict]]:
        if stage not in STAGES:
            raise ValueError(f"stage must be one of {STAGES}, got {stage!r}")
        for defense in (d for d in self.defenses if d.stage == stage):
            verdict = defense.check(payload, context)
            if not isinstance(verdict, Verdict):
                raise TypeError(
                    f"{_name(defense)}.check returned {type(verdict).__name__}, not Verdict"
                )
            yield _name(defense), verdict
            payload = verdict.payload
            if self.fail_fast and not verdict.valid:
                return

    @staticmethod
    def _combine(payload: Any, verdicts: list[tuple[str, Verdict]]) -> GuardVerdict:
        final = verdicts[-1][1].payload if verdicts else payload
        reasons = [f"{n}: {v.reason}" if v.reason else n for n, v in verdicts if not v.valid]
        return GuardVerdict(
            payload=final,
            valid=all(v.valid for _, v in verdicts),
            risk=max((v.risk for _, v in verdicts), default=0.0),
            reason="; ".join(reasons),
            verdicts=verdicts,
        )

    def check(
        self, payload: Any, *, stage: str, context: Mapping[str, Any] | None = None
    ) -> GuardVerdict:
        """Run the defenses of `stage` in order (stopping at the first invalid if fail_fast)."""
        return self._combine(payload, list(self._apply(payload, stage, context)))

    def filter(
        self, dataset: Sequence[Any], *, context: Mapping[str, Any] | None = None
    ) -> FilterResult:
        """Run the train_data defenses; return kept and removed indices into `dataset`."""
        index = list(range(len(dataset)))  # position in `dataset` of each row still kept
        removed: list[int] = []
        verdicts: list[tuple[str, Verdict]] = []
        for name, verdict in self._apply(dataset, "train_data", context):
            local = sorted({int(i) for i in verdict.details.get("removed", ())})
            if local and not 0 <= local[0] <= local[-1] < len(index):
                raise ValueError(f"{name} removed index out of range 0..{len(index) - 1}: {local}")
            drop = set(local)
            removed += [index[i] for i in local]
            index = [orig for pos, orig in enumerate(index) if pos not in drop]
            if hasattr(verdict.payload, "__len__") and len(verdict.payload) != len(index):
                raise ValueError(
                    f"{name} returned {len(verdict.payload)} rows but kept {len(index)}: a train_data "
                    "defense returns the kept rows as its payload"
                )
            verdicts.append((name, verdict))
        return FilterResult(
            kept=index, removed=sorted(removed), verdict=self._combine(dataset, verdicts)
        )

    def stream(
        self, chunks: Iterable[Any], *, context: Mapping[str, Any] | None = None
    ) -> GuardedStream:
        """Pass output chunks through while the output-stage verdict on the prefix stays valid."""
        return GuardedStream(self, chunks, context)

    def wrap(
        self,
        chat_model: ChatModel,
        tools: Mapping[str, Callable[..., Any]] | None = None,
        *,
        refusal: str = "I can't help with that.",
    ) -> GuardedChatModel:
        """Put the input, output and tool stages around a chat model and its tools."""
        return GuardedChatModel(self, chat_model, tools or {}, refusal)


class GuardedStream:
    """Iterates the chunks the guard lets through; `verdict` and `stopped_at` tell why it ended."""

    def __init__(self, guard: Guard, chunks: Iterable[Any], context: Mapping[str, Any] | None):
        self.guard, self.chunks, self.context = guard, chunks, dict(context or {})
        self.verdict: GuardVerdict | None = None
        self.stopped_at: int | None = None
        self.emitted: list[Any] = []

    def __iter__(self) -> Iterator[Any]:
        text, all_text = "", True  # the running prefix, kept so each chunk costs one append
        for i, chunk in enumerate(self.chunks):
            all_text = all_text and isinstance(chunk, str)
            prefix = text + chunk if all_text else [*self.emitted, chunk]
            context = {**self.context, "chunk": chunk, "index": i}
            self.verdict = self.guard.check(prefix, stage="output", context=context)
            if not self.verdict.valid:
                self.stopped_at = i
                return
            self.emitted.append(chunk)
            if all_text:
                text = prefix
            yield chunk

    @property
    def text(self) -> str:
        return "".join(str(c) for c in self.emitted)


class GuardedChatModel:
    """A ChatModel whose input, streamed output and tools pass through a Guard."""

    def __init__(
        self, guard: Guard, model: ChatModel, tools: Mapping[str, Callable[..., Any]], refusal: str
    ):
        self.guard, self.model, self.refusal = guard, model, refusal
        self.tools = {name: self._guard_tool(name, fn) for name, fn in tools.items()}
        self.last_verdict: GuardVerdict | None = None

    def stream(self, messages: Sequence[Message], **kw: Any) -> Iterator[str]:
        self.last_verdict = self.guard.check(list(messages), stage="input")
        if not self.last_verdict.valid:
            yield self.refusal
            return
        guarded = self.guard.stream(stream_chat(self.model, self.last_verdict.payload, **kw))
        yield from guarded
        self.last_verdict = guarded.verdict or self.last_verdict
        if guarded.stopped_at is not None:
            yield ("\n" if guarded.emitted else "") + self.refusal

    def chat(self, messages: Sequence[Message], **kw: Any) -> str:
        return "".join(self.stream(messages, **kw))

    def _guard_tool(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def guarded(**arguments: Any) -> Any:
            call = self.guard.check(
                {"name": name, "arguments": arguments}, stage="tool", context={"phase": "call"}
            )
            if not call.valid:
                return f"[blocked call to {name}: {call.reason}]"
            result = fn(**call.payload["arguments"])
            checked = self.guard.check(
                result, stage="tool", context={"phase": "result", "tool": name}
            )
            return (
                checked.payload
                if checked.valid
                else f"[blocked result of {name}: {checked.reason}]"
            )

        guarded.__name__, guarded.__doc__ = name, fn.__doc__
        return guarded


def compose(*defenses: Any, fail_fast: bool = False) -> Guard:
    """One Guard from defenses of any papers (or a user's own objects with stage and check)."""
    return Guard(defenses, fail_fast=fail_fast)


@dataclass
class Evaluation:
    """Attack success rate without and with a guard, and how many attempts the guard blocked."""

    success_rate: float
    guarded_success_rate: float | None
    blocked: int
    attempts: int
    queries: int
    result: AttackResult

    def to_dict(self) -> dict[str, Any]:
        return {
            "success_rate": self.success_rate,
            "guarded_success_rate": self.guarded_success_rate,
            "blocked": self.blocked,
            "attempts": self.attempts,
            "queries": self.queries,
        }


def evaluate(
    attack: Any,
    target: Any,
    inputs: Any = None,
    *,
    guard: Guard | None = None,
    budget: int | None = None,
) -> Evaluation:
    """Run `attack` on `target`; with a guard, the guard checks what the attack produced.

    The guard sits at `attack.stage`. An attack that can re-score its success on a sanitized
    payload (a poisoning attack re-trains on the filtered data; an item a guard rewrote may no
    longer work) defines `assess(target, payload) -> bool | list[bool]`, receiving None for each
    item the guard blocked; otherwise each adversarial item counts as a success only if it
    succeeded and the guard let it through.
    """
    result = attack.run(target, inputs, budget=budget)
    per_item = not isinstance(result.success, bool)
    flags = [bool(s) for s in result.success] if per_item else [bool(result.success)]
    base = Evaluation(result.success_rate, None, 0, len(flags), result.queries, result)
    if guard is None:
        return base
    stage = getattr(attack, "stage", None)
    if stage not in STAGES:
        raise ValueError(
            f"attack {type(attack).__name__} declares no stage in {STAGES}; cannot place a guard"
        )
    assess = getattr(attack, "assess", None)
    if stage == "train_data":
        filtered = guard.filter(result.adversarial)
        if not callable(assess):
            raise TypeError(
                "a train_data attack must define assess(target, payload) to be evaluated"
            )
        guarded = assess(target, filtered.verdict.payload)
        blocked = len(filtered.removed)
    else:
        items = list(result.adversarial) if per_item else [result.adversarial]
        verdicts = [guard.check(item, stage=stage) for item in items]
        blocked = sum(not v.valid for v in verdicts)
        if callable(assess):  # blocked items reach `assess` as None
            payloads = [v.payload if v.valid else None for v in verdicts]
            guarded = assess(target, payloads if per_item else payloads[0])
        else:
            guarded = [f and v.valid for f, v in zip(flags, verdicts, strict=True)]
    guarded_flags = [bool(guarded)] if isinstance(guarded, bool) else [bool(g) for g in guarded]
    rate = sum(guarded_flags) / len(guarded_flags) if guarded_flags else 0.0
    base.guarded_success_rate, base.blocked = rate, blocked
    return base
