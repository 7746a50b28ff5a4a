"""Local Hugging Face backend: any causal LM by name or path, with its chat template.

One decoding loop (KV cache, greedy or seeded sampling) serves `complete`, `chat` and
`stream`, so streamed text equals the non-streamed text by construction, and each generated
token's log-probability under the model is recorded (SCM and CSD read them).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from paperplug.checks import (
    check_device,
    check_float_tensor,
    check_scalar,
    check_sequence,
    check_type,
)
from paperplug.extras import requires_extra

with requires_extra("paperplug-llm", "hf", "the local Hugging Face backend"):
    import torch

from paperplug_llm.likelihood import continuation_logprobs, forward_with_cache
from paperplug_llm.messages import (
    Completion,
    ReplyStream,
    ToolCall,
    check_messages,
    check_tool_choice,
    check_tools,
)
from paperplug_llm.paths import check_model_source, loading
from paperplug_llm.tool_calls import (
    forced_call_prefix,
    parse_tool_calls,
    read_arguments,
    render_for_template,
)


@dataclass
class _Run:
    """What one generation accumulates while it streams."""

    token_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    finish_reason: str = "length"
    prompt_tokens: int = 0


def _holdback(text: str, stops: Sequence[str]) -> int:
    """How many trailing characters could be the start of a stop string (not yet safe to emit)."""
    keep = 0
    for s in stops:
        for k in range(min(len(s) - 1, len(text)), 0, -1):
            if text.endswith(s[:k]):
                keep = max(keep, k)
                break
    return keep


def sample_next(
    logits: torch.Tensor,
    *,
    temperature: float,
    top_p: float = 1.0,
    top_k: int = 0,
    generator: torch.Generator | None = None,
) -> int:
    """Pick the next token from `logits` (vocab,): argmax at temperature 0, else nucleus/top-k.
    A logit of -inf (a masked token) is never picked; NaN and +inf are errors."""
    check_float_tensor(logits, "logits", ndim=1, finite=False)
    if bool(torch.isnan(logits).any() | torch.isposinf(logits).any()):
        raise ValueError("logits holds NaN or +inf: a model's scores are finite (-inf masks)")
    if bool(torch.isneginf(logits).all()):
        raise ValueError("logits are all -inf: every token is masked")
    temperature = check_scalar(temperature, "temperature", low=0)
    top_p = check_scalar(top_p, "top_p", low=0, high=1, inclusive="right")
    top_k = check_scalar(top_k, "top_k", "int", low=0)
    if generator is not None:
        check_type(generator, "generator", torch.Generator)
    if temperature == 0:
        return int(torch.argmax(logits))
    scores = logits.float() / temperature
    if top_k > 0:
        kth = torch.topk(scores, min(top_k, scores.numel())).values[-1]
        scores = scores.masked_fill(scores < kth, float("-inf"))
    probs = torch.softmax(scores, -1)
    if top_p < 1.0:
        sorted_p, order = torch.sort(probs, descending=True)
        drop = (
            torch.cumsum(sorted_p, 0) - sorted_p >= top_p
        )  # keep the smallest head reaching top_p
        probs = probs.clone()
        probs[order[drop]] = 0.0
    return int(torch.multinomial(probs, 1, generator=generator))


def check_options(
    *,
    chat_template: str | None = None,
    dtype: Any = None,
    device: str | None = None,
    max_tokens: int = 256,
    name: str | None = None,
    **load_kw: Any,
) -> None:
    """HFChatModel's options, checked before anything is loaded (`load_kw` go to
    `from_pretrained` as they are)."""
    for key, value in (("chat_template", chat_template), ("name", name)):
        if value is not None and check_type(value, key, str) == "":
            raise ValueError(f"{key} is empty: give a string or None")
    if dtype is not None and dtype != "auto":
        check_type(dtype, "dtype", (str, torch.dtype), what="a torch dtype, its name or 'auto'")
        resolved = getattr(torch, dtype, None) if isinstance(dtype, str) else dtype
        if not isinstance(resolved, torch.dtype) or not resolved.is_floating_point:
            raise ValueError(f"dtype must be a floating torch dtype (or 'auto'), got {dtype!r}")
    if device is not None:
        check_device(device)
    check_scalar(max_tokens, "max_tokens", "int", low=1)


class HFChatModel:
    """A ChatModel over a transformers causal LM (`from_pretrained` name/path, or a loaded one
    with its tokenizer; `dtype` applies when loading, a loaded model is moved to `device`).

    Decoding keywords (OpenAI's names): max_tokens, temperature (0 = greedy, the default),
    top_p, top_k, seed, stop (strings), tools (OpenAI `tools` entries).
    """

    def __init__(
        self,
        model: Any,
        tokenizer: Any = None,
        *,
        chat_template: str | None = None,
        dtype: Any = None,
        device: str | None = None,
        max_tokens: int = 256,
        name: str | None = None,
        **load_kw: Any,
    ) -> None:
        check_options(
            chat_template=chat_template,
            dtype=dtype,
            device=device,
            max_tokens=max_tokens,
            name=name,
        )
        if tokenizer is not None and not hasattr(tokenizer, "apply_chat_template"):
            raise TypeError(
                f"tokenizer must be a transformers tokenizer, got {type(tokenizer).__name__}"
            )
        if isinstance(model, (str, os.PathLike)):
            from transformers import AutoModelForCausalLM, AutoTokenizer

            source = check_model_source(model, "model")
            name = name or source
            with loading("model", model):
                tokenizer = tokenizer or AutoTokenizer.from_pretrained(source)
                model = AutoModelForCausalLM.from_pretrained(
                    source, dtype=dtype or torch.float32, **load_kw
                )
        elif not isinstance(model, torch.nn.Module) or not callable(model):
            raise TypeError(
                f"model must be a name, a path or a torch causal LM, got {type(model).__name__}"
            )
        elif dtype is not None or load_kw:
            raise ValueError(
                "dtype and loading keywords apply when loading by name or path; convert a "
                "loaded model yourself (model.to(dtype))"
            )
        if tokenizer is None:
            raise TypeError("a loaded model needs its transformers tokenizer (tokenizer=...)")
        self.chat_template = chat_template  # None: the tokenizer's own
        if not (chat_template or getattr(tokenizer, "chat_template", None)):
            raise ValueError(
                "the tokenizer has no chat template: pass chat_template=<jinja string>"
            )
        self.model = model.to(device) if device else model
        self.model.eval()
        self.tokenizer = tokenizer
        self.max_tokens = int(max_tokens)
        self.name = name or getattr(model.config, "_name_or_path", "") or type(model).__name__
        eos = getattr(model.generation_config, "eos_token_id", None)
        eos = [eos] if isinstance(eos, int) else list(eos or [])
        if tokenizer.eos_token_id is not None:
            eos.append(tokenizer.eos_token_id)
        self.eos_token_ids = frozenset(eos)

    def __repr__(self) -> str:
        return f"HFChatModel({self.name!r})"

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters()).device

    # -- prompt ------------------------------------------------------------------------------
    def prompt_ids(
        self,
        messages: Sequence[Mapping[str, Any]],
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> list[int]:
        """Token ids of the conversation under the chat template, assistant turn opened."""
        messages = check_messages(messages)
        tools = check_tools(tools)
        template = {"chat_template": self.chat_template, "add_generation_prompt": True}
        if tools and "tools" in (self.chat_template or self.tokenizer.chat_template):
            text = self.tokenizer.apply_chat_template(
                messages, tools=tools, tokenize=False, **template
            )
        else:
            text = self.tokenizer.apply_chat_template(
                render_for_template(messages, tools), tokenize=False, **template
            )
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    # -- decoding ----------------------------------------------------------------------------
    def _token_steps(
        self,
        ids: list[int],
        max_tokens: int,
        temperature: float,
        top_p: float,
        top_k: int,
        seed: int | None,
    ) -> Iterator[tuple[int, float]]:
        """(token id, log p(token | prefix)) per step, stopping after an end-of-sequence token."""
        generator = None
        if temperature > 0 and seed is not None:
            generator = torch.Generator(device=self.device).manual_seed(int(seed))
        inputs = torch.tensor([ids], device=self.device)
        past = None
        with torch.inference_mode():
            for _ in range(max_tokens):
                out, past = forward_with_cache(self.model, inputs, past)
                logits = out.logits[0, -1].float()  # (vocab,)
                token = sample_next(
                    logits, temperature=temperature, top_p=top_p, top_k=top_k, generator=generator
                )
                yield token, float(torch.log_softmax(logits, -1)[token])
                if token in self.eos_token_ids:
                    return
                inputs = torch.tensor([[token]], device=self.device)

    def _deltas(
        self,
        messages: Sequence[Mapping[str, Any]],
        run: _Run,
        kw: dict[str, Any],
        prefill: str = "",
        until: Callable[[str], bool] | None = None,
    ) -> Iterator[str]:
        """Text deltas of one generation; `run` collects tokens, log-probs and the finish reason.

        `prefill` is text put in the model's mouth after the prompt (not emitted); generation
        also stops once `until(text)` holds."""
        opts = {
            "max_tokens": self.max_tokens,
            "temperature": 0.0,
            "top_p": 1.0,
            "top_k": 0,
            "seed": None,
            "stop": None,
            "tools": None,
            "tool_choice": None,
        }
        unknown = set(kw) - set(opts)
        if unknown:
            raise TypeError(f"unknown decoding options {sorted(unknown)}; known: {sorted(opts)}")
        opts.update({k: v for k, v in kw.items() if v is not None})
        max_tokens = check_scalar(opts["max_tokens"], "max_tokens", "int", low=1)
        temperature = check_scalar(opts["temperature"], "temperature", low=0)
        top_p = check_scalar(opts["top_p"], "top_p", low=0, high=1, inclusive="right")
        top_k = check_scalar(opts["top_k"], "top_k", "int", low=0)
        check_scalar(opts["seed"], "seed", "int", low=0, allow_none=True)
        stop = opts["stop"]
        stops = (
            [stop] if isinstance(stop, str) else check_sequence(stop or [], "stop", str, min_len=0)
        )
        if "" in stops:
            raise ValueError("stop holds an empty string, which would stop before any text")
        if opts["tool_choice"] not in (None, "auto", "none"):
            raise ValueError("a forced tool_choice is served by complete(), not chat()/stream()")
        tools = None if opts["tool_choice"] == "none" else opts["tools"]
        ids = self.prompt_ids(messages, tools) + self.encode(prefill)
        run.prompt_tokens = len(ids)
        emitted = ""
        text = ""
        for token, logprob in self._token_steps(
            ids, max_tokens, temperature, top_p, top_k, opts["seed"]
        ):
            if token in self.eos_token_ids:
                run.finish_reason = "stop"
                break
            run.token_ids.append(token)
            run.logprobs.append(logprob)
            text = self.tokenizer.decode(
                run.token_ids, skip_special_tokens=True, clean_up_tokenization_spaces=False
            )
            hits = [i for i in (text.find(s) for s in stops) if i >= 0]
            if hits:
                text = text[: min(hits)]
                run.finish_reason = "stop"
                break
            if until is not None and until(text):
                run.finish_reason = "stop"
                break
            if text.endswith("\ufffd"):
                continue  # an incomplete UTF-8 character: wait for its next byte
            safe = len(text) - _holdback(text, stops)
            if safe > len(emitted) and text.startswith(emitted):
                yield text[len(emitted) : safe]
                emitted = text[:safe]
        if len(text) > len(emitted) and text.startswith(emitted):
            yield text[len(emitted) :]

    def encode(self, text: str) -> list[int]:
        """Token ids of `text` alone (no special tokens)."""
        return list(self.tokenizer(text, add_special_tokens=False)["input_ids"]) if text else []

    def continuation_logprobs(
        self,
        messages: Sequence[Mapping[str, Any]],
        candidates: Sequence[str],
        *,
        prefix: str = "",
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> list[list[float]]:
        """log p(token | conversation, prefix, earlier tokens) for each token of each candidate
        reply: the prompt is encoded once and the candidates scored in batches over its cache."""
        candidates = check_sequence(candidates, "candidates", str, min_len=0, what="strings")
        check_type(prefix, "prefix", str)
        prompt = self.prompt_ids(messages, tools) + self.encode(prefix)
        return continuation_logprobs(self.model, prompt, [self.encode(c) for c in candidates])

    def pick_tool(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]
    ) -> str:
        """The tool name the model finds most likely after `<tool_call>{"name": "` (summed log-probs)."""
        if not check_tools(tools):
            raise ValueError("tools must hold at least one tool to pick from")
        names = [t["function"]["name"] for t in tools]
        scored = self.continuation_logprobs(
            messages, [n + '"' for n in names], prefix='<tool_call>{"name": "', tools=tools
        )
        totals = [sum(s) for s in scored]
        return names[max(range(len(names)), key=totals.__getitem__)]

    def _forced_call(self, messages: Sequence[Mapping[str, Any]], kw: dict[str, Any]) -> Completion:
        """tool_choice "required" or {"function": {"name": ...}}: the name is chosen (or given),
        the arguments are generated after a prefix naming the first parameter."""
        tools, choice = list(kw.get("tools") or []), kw.pop("tool_choice")
        if not tools:
            raise ValueError(f"tool_choice={choice!r} needs tools")
        specs = {t["function"]["name"]: t["function"] for t in tools}
        name = (
            choice["function"]["name"]
            if isinstance(choice, Mapping)
            else self.pick_tool(messages, tools)
        )
        if name not in specs:
            raise ValueError(
                f"tool_choice names {name!r}, which is not among the tools {sorted(specs)}"
            )
        prefix = forced_call_prefix(name, specs[name].get("parameters") or {})
        head = prefix[prefix.index('"arguments": ') + len('"arguments": ') :]
        run = _Run()
        done = lambda text: isinstance(read_arguments(head + text), dict)  # noqa: E731
        body = "".join(self._deltas(messages, run, kw, prefill=prefix, until=done))
        call = ToolCall(name=name, arguments=read_arguments(head + body), id="call_0")
        return self._completion("", [call], "tool_calls", run)

    def _completion(self, text: str, calls: list[ToolCall], finish: str, run: _Run) -> Completion:
        return Completion(
            text=text,
            tool_calls=calls,
            finish_reason=finish,
            usage={
                "prompt_tokens": run.prompt_tokens,
                "completion_tokens": len(run.token_ids),
                "total_tokens": run.prompt_tokens + len(run.token_ids),
            },
            tokens=[self.tokenizer.decode([t]) for t in run.token_ids],
            token_ids=run.token_ids,
            logprobs=run.logprobs,
        )

    def _reply(
        self, messages: Sequence[Mapping[str, Any]], kw: dict[str, Any]
    ) -> Generator[str, None, Completion]:
        """Text deltas of one reply, returning its Completion. With tools the reply is decoded
        whole first, so the `<tool_call>` markup never reaches the reader as text."""
        tools = check_tools(kw.get("tools"))
        check_tool_choice(kw.get("tool_choice"), tools)
        if kw.get("tool_choice") not in (None, "auto", "none"):
            return self._forced_call(messages, dict(kw))
        run = _Run()
        if not tools or kw.get("tool_choice") == "none":
            text = ""
            for piece in self._deltas(messages, run, kw):
                text += piece
                yield piece
            return self._completion(text, [], run.finish_reason, run)
        text, calls = parse_tool_calls("".join(self._deltas(messages, run, kw)))
        if text:
            yield text
        return self._completion(text, calls, "tool_calls" if calls else run.finish_reason, run)

    def complete(self, messages: Sequence[Mapping[str, Any]], **kw: Any) -> Completion:
        """One reply, with tokens, their log-probs and (when `tools` were given) parsed tool calls.

        tool_choice: "auto" (default), "none", "required" or {"type": "function", "function":
        {"name": ...}}, as in OpenAI's API; a forced call is one call per turn. finish_reason
        is "length" when max_tokens cut the reply."""
        stream = self.stream(messages, **kw)
        for _ in stream:
            pass
        assert stream.completion is not None
        return stream.completion

    def chat(self, messages: Sequence[Mapping[str, Any]], **kw: Any) -> str:
        """The reply's text."""
        return self.complete(messages, **kw).text

    def stream(self, messages: Sequence[Mapping[str, Any]], **kw: Any) -> ReplyStream:
        """The reply's text, a piece per decoded token (held back while it may start a stop
        string); after iteration, `.completion` holds the finish reason, usage, tool calls."""
        check_messages(messages)  # at the call, not at the first piece read
        check_tool_choice(kw.get("tool_choice"), check_tools(kw.get("tools")))
        return ReplyStream(self._reply(messages, kw))

    def token_logprobs(
        self, messages: Sequence[Mapping[str, Any]], continuation: str | Sequence[int]
    ) -> list[tuple[str, float]]:
        """log p(token | conversation, earlier tokens) for each token of an assistant reply
        (text, or token ids), in one teacher-forced forward pass."""
        if isinstance(continuation, str):
            cont = self.encode(continuation)
        else:
            vocab = self.model.get_input_embeddings().num_embeddings
            cont = [
                check_scalar(t, f"continuation[{i}]", "int", low=0, high=vocab - 1)
                for i, t in enumerate(check_sequence(continuation, "continuation", min_len=0))
            ]
        if not cont:
            raise ValueError("continuation is empty: give the reply's text or token ids")
        (values,) = continuation_logprobs(self.model, self.prompt_ids(messages), [cont])
        return [(self.tokenizer.decode([t]), v) for t, v in zip(cont, values, strict=True)]
