"""Compose defenses from any papers into one Guard, and measure an attack with and without it.

Payload per stage: train_data, a dataset (a defense reports `details["removed"]` and returns
the kept rows as its payload); input, the chat messages; tool, a tool call or a tool result;
decode, the chat model itself (a safe-decoding defense returns, as its payload, a model that
decodes under it; `wrap` applies these before the other stages); output, the text produced so
far.
"""

from __future__ import annotations

import itertools
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


ON_ERROR = ("block", "raise")


class Guard:
    """Defenses routed by stage; each sees the payload the previous one sanitized.

    A defense that raises, or returns something other than a Verdict, fails the guard closed:
    its verdict is invalid with risk 1, names the defense and the error, and the payload is
    blocked (`on_error="raise"` re-raises instead). Errors of the types in `raises` always
    propagate, with a note naming the defense: ones the caller answers itself (a server's 503
    for a lost state store)."""

    def __init__(
        self,
        defenses: Sequence[Any],
        *,
        fail_fast: bool = False,
        on_error: str = "block",
        raises: tuple[type[BaseException], ...] = (),
    ) -> None:
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
        if on_error not in ON_ERROR:
            raise ValueError(f"on_error must be one of {ON_ERROR}, got {on_error!r}")
        if not isinstance(raises, tuple) or not all(
            isinstance(t, type) and issubclass(t, BaseException) for t in raises
        ):
            raise TypeError(f"raises must be a tuple of exception types, got {raises!r}")
        self.defenses = list(defenses)
        self.fail_fast = fail_fast
        self.on_error = on_error
        self.raises = raises

    def stages(self) -> list[str]:
        return [s for s in STAGES if any(d.stage == s for d in self.defenses)]

    def _check_one(self, defense: Any, payload: Any, context: Mapping[str, Any] | None) -> Verdict:
        """One defense's verdict; an error or a non-Verdict answer becomes a blocking verdict."""
        name = _name(defense)
        try:
            verdict = defense.check(payload, context)
            if not isinstance(verdict, Verdict):
                raise TypeError(f"check returned {type(verdict).__name__}, not a Verdict")
        except Exception as exc:
            if isinstance(exc, self.raises):
                exc.add_note(f"raised by the defense {name}")
                raise
            if self.on_error == "raise":
                raise
            error = f"{type(exc).__name__}: {exc}"
            return Verdict(
                payload,
                False,
                1.0,
                reason=f"{name} failed, so the guard blocks ({error})",
                details={"error": error, "defense": name, "failed_closed": True},
            )
        return verdict

    def _apply(
        self, payload: Any, stage: str, context: Mapping[str, Any] | None
    ) -> Iterator[tuple[str, Verdict]]:
        if stage not in STAGES:
            raise ValueError(f"stage must be one of {STAGES}, got {stage!r}")
        for defense in (d for d in self.defenses if d.stage == stage):
            verdict = self._check_one(defense, payload, context)
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
        """Run the train_data defenses; return kept and removed indices into `dataset`.

        A defense that fails removes every row still kept (the guard fails closed)."""
        index = list(range(len(dataset)))  # position in `dataset` of each row still kept
        removed: list[int] = []
        verdicts: list[tuple[str, Verdict]] = []
        for name, verdict in self._apply(dataset, "train_data", context):
            if verdict.details.get("failed_closed"):
                local = list(range(len(index)))
                verdict.payload = []
            else:
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
            if not index:
                break
        return FilterResult(
            kept=index, removed=sorted(removed), verdict=self._combine(dataset, verdicts)
        )

    def stream(
        self, chunks: Iterable[Any], *, context: Mapping[str, Any] | None = None
    ) -> GuardedStream:
        """Pass output chunks through while the output-stage verdict on the prefix stays valid;
        the whole output is checked once more at the end (context["final"] is True)."""
        return GuardedStream(self, chunks, context)

    def wrap(
        self,
        chat_model: ChatModel,
        tools: Mapping[str, Callable[..., Any]] | None = None,
        *,
        refusal: str = "I can't help with that.",
    ) -> GuardedChatModel:
        """Put the decode, input, output and tool stages around a chat model and its tools.

        Decode-stage defenses receive the model and return, as their payload, the model that
        decodes under them (safe decoding); a blocked decode stage is an error here."""
        if "decode" in self.stages():
            verdict = self.check(chat_model, stage="decode")
            if not verdict.valid:
                raise ValueError(f"the decode-stage defenses refused the model: {verdict.reason}")
            chat_model = verdict.payload
        return GuardedChatModel(self, chat_model, tools or {}, refusal)


class GuardedStream:
    """Iterates the output the guard lets through; `verdict` and `stopped_at` tell why it ended.

    For text, a defense may judge only part of the prefix (a monitor waiting for the last word
    to be complete) and say so with `details["judged"]` (characters judged): the text past the
    smallest such frontier is held back until a later check covers it. At the end of the
    stream the whole text is checked once more with `context["final"] = True`; `stopped_at` is
    the index of the chunk that made the output invalid (the number of chunks when the final
    check did). A caller that receives chunks one by one (a server relaying an upstream
    stream) drives the same logic with `feed(chunk)` and `finish()`."""

    def __init__(self, guard: Guard, chunks: Iterable[Any], context: Mapping[str, Any] | None):
        self.guard, self.chunks, self.context = guard, chunks, dict(context or {})
        self.verdict: GuardVerdict | None = None
        self.stopped_at: int | None = None
        self.emitted: list[Any] = []
        self.finished = False
        self._text, self._shown, self._all_text, self._count = "", 0, True, 0

    def _judged(self, prefix: str) -> int:
        assert self.verdict is not None
        frontier = len(prefix)
        for _, v in self.verdict.verdicts:
            judged = v.details.get("judged")
            if judged is not None:
                frontier = min(frontier, max(0, int(judged)))
        return frontier

    def feed(self, chunk: Any) -> list[Any]:
        """Check the output with `chunk` added; the pieces that may be shown now (none once
        the output was stopped or finished)."""
        if self.stopped_at is not None or self.finished:
            return []
        i = self._count
        if isinstance(chunk, (bytes, bytearray)):
            raise TypeError(
                f"chunks[{i}] is {type(chunk).__name__}: decode the stream to str first (an "
                "output monitor reads text; bytes would be judged as a list of pieces)"
            )
        self._count += 1
        self._all_text = self._all_text and isinstance(chunk, str)
        prefix = self._text + chunk if self._all_text else [*self.emitted, chunk]
        context = {**self.context, "chunk": chunk, "index": i, "final": False}
        self.verdict = self.guard.check(prefix, stage="output", context=context)
        if not self.verdict.valid:
            self.stopped_at = i
            return []
        if not self._all_text:
            self.emitted.append(chunk)
            return [chunk]
        self._text = prefix
        frontier = self._judged(prefix)
        if frontier <= self._shown:
            return []
        piece, self._shown = prefix[self._shown : frontier], frontier
        self.emitted.append(piece)
        return [piece]

    def finish(self) -> list[Any]:
        """The last check, of the whole output with `context["final"] = True`; what was held
        back and may now be shown."""
        if self.stopped_at is not None or self.finished:
            return []
        self.finished = True
        final = self._text if self._all_text else list(self.emitted)
        context = {**self.context, "index": self._count, "final": True}
        self.verdict = self.guard.check(final, stage="output", context=context)
        if not self.verdict.valid:
            self.stopped_at = self._count
            return []
        if self._all_text and len(self._text) > self._shown:
            piece = self._text[self._shown :]
            self.emitted.append(piece)
            return [piece]
        return []

    def __iter__(self) -> Iterator[Any]:
        for chunk in self.chunks:
            yield from self.feed(chunk)
            if self.stopped_at is not None:
                return
        yield from self.finish()

    @property
    def text(self) -> str:
        return "".join(str(c) for c in self.emitted)


def _last_user_text(messages: Sequence[Message]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            content = message.get("content")
            return content if isinstance(content, str) else str(content)
    return ""


class GuardedChatModel:
    """A ChatModel whose input, streamed output and tools pass through a Guard.

    Every check's context carries the conversation (`messages`, and `prompt`, the last user
    message): an output monitor trained with prompts, or a tool guard that plans from the
    user's task, reads it there. Each call gets its own `conversation_id`, so a stateful
    monitor shared by concurrent calls keeps their streams apart."""

    _calls = itertools.count()

    def __init__(
        self, guard: Guard, model: ChatModel, tools: Mapping[str, Callable[..., Any]], refusal: str
    ):
        self.guard, self.model, self.refusal = guard, model, refusal
        self.tools = {name: self._guard_tool(name, fn) for name, fn in tools.items()}
        self.last_verdict: GuardVerdict | None = None
        self.messages: list[Message] = []  # the conversation of the latest call
        self.conversation_id: str | None = None  # the latest call's id in every check's context

    def _context(self, **extra: Any) -> dict[str, Any]:
        """A tool check's context: the conversation of the latest model call."""
        return {"messages": self.messages, "prompt": _last_user_text(self.messages), **extra}

    def _admit(self, messages: Sequence[Message]) -> tuple[GuardVerdict, dict[str, Any]]:
        """The input verdict and this call's context (kept local: calls may run concurrently)."""
        messages = list(messages)
        context = {
            "messages": messages,
            "prompt": _last_user_text(messages),
            "conversation_id": f"wrap-{next(self._calls)}",
        }
        verdict = self.guard.check(messages, stage="input", context=context)
        self.messages, self.last_verdict = messages, verdict
        self.conversation_id = context["conversation_id"]  # the latest call's
        return verdict, context

    def stream(self, messages: Sequence[Message], **kw: Any) -> Iterator[str]:
        admitted, context = self._admit(messages)
        if not admitted.valid:
            yield self.refusal
            return
        chunks = stream_chat(self.model, admitted.payload, **kw)
        guarded = self.guard.stream(chunks, context=context)
        yield from guarded
        self.last_verdict = guarded.verdict or admitted
        if guarded.stopped_at is not None:
            yield ("\n" if guarded.emitted else "") + self.refusal

    def chat(self, messages: Sequence[Message], **kw: Any) -> str:
        return "".join(self.stream(messages, **kw))

    @property
    def complete(self) -> Callable[..., Any]:
        """The wrapped model's `complete` (text plus tool calls), guarded; absent if it has none.

        A blocked input returns the refusal as plain text; a blocked output returns the result
        with its text replaced by the refusal and its tool calls dropped."""
        inner = getattr(self.model, "complete", None)
        if not callable(inner):
            raise AttributeError(f"{type(self.model).__name__} has no complete()")

        def complete(messages: Sequence[Message], **kw: Any) -> Any:
            admitted, context = self._admit(messages)
            if not admitted.valid:
                return self.refusal  # nothing reached the model: the refusal as plain text
            result = inner(admitted.payload, **kw)
            text = getattr(result, "text", result)
            context = {**context, "index": 0, "final": True}
            self.last_verdict = self.guard.check(text, stage="output", context=context)
            if self.last_verdict.valid:
                return result
            return _replace_text(result, self.refusal)

        return complete

    def _guard_tool(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def guarded(**arguments: Any) -> Any:
            call = self.guard.check(
                {"name": name, "arguments": arguments},
                stage="tool",
                context=self._context(phase="call", tool=name),
            )
            if not call.valid:
                return f"[blocked call to {name}: {call.reason}]"
            result = fn(**call.payload["arguments"])
            checked = self.guard.check(
                result, stage="tool", context=self._context(phase="result", tool=name)
            )
            return (
                checked.payload
                if checked.valid
                else f"[blocked result of {name}: {checked.reason}]"
            )

        guarded.__name__, guarded.__doc__ = name, fn.__doc__
        return guarded


def _replace_text(result: Any, text: str) -> Any:
    """`result` with its text replaced by `text` and no tool calls (a refusal)."""
    if isinstance(result, str):
        return text
    import dataclasses

    if dataclasses.is_dataclass(result):
        changes = {"text": text}
        if hasattr(result, "tool_calls"):
            changes["tool_calls"] = []
        if hasattr(result, "finish_reason"):
            changes["finish_reason"] = "stop"
        return dataclasses.replace(result, **changes)
    return text


def compose(
    *defenses: Any,
    fail_fast: bool = False,
    on_error: str = "block",
    raises: tuple[type[BaseException], ...] = (),
) -> Guard:
    """One Guard from defenses of any papers (or a user's own objects with stage and check).

    `on_error="block"` (default) fails closed when a defense raises; "raise" re-raises; errors
    of the types in `raises` always propagate."""
    return Guard(defenses, fail_fast=fail_fast, on_error=on_error, raises=raises)


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

    Every guard check receives `context={"attack": attack, "attack_result": result, "target":
    target}`: a train_data defense that needs what the attack produced (the model fine-tuned on
    the poisoned rows, in `result.meta`) finds it there.
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
    context = {"attack": attack, "attack_result": result, "target": target}
    if stage == "train_data":
        filtered = guard.filter(result.adversarial, context=context)
        if not callable(assess):
            raise TypeError(
                "a train_data attack must define assess(target, payload) to be evaluated"
            )
        guarded = assess(target, filtered.verdict.payload)
        blocked = len(filtered.removed)
    else:
        items = list(result.adversarial) if per_item else [result.adversarial]
        verdicts = [guard.check(item, stage=stage, context=context) for item in items]
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
