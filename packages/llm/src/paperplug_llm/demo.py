"""Embedded default: load SmolLM2-135M-Instruct, stream a chat, run one tool round; print timings."""

from __future__ import annotations

import sys
import time

from paperplug.harness import demo_parser, pyplot, save_figure, single_thread, table


def main(argv: list[str] | None = None) -> int:
    parser = demo_parser("llm", __doc__)
    parser.add_argument("--max-tokens", type=int, default=48)
    args = parser.parse_args(argv)
    single_thread()
    from paperplug_llm.agent import run_agent
    from paperplug_llm.smollm2 import is_cached, load_smollm2, weights_dir

    rows: list[tuple[str, str]] = []
    cached = is_cached()
    print(
        f"loading SmolLM2-135M-Instruct ({'cached' if cached else 'first use: fetch + de-quantize'}) ...",
        flush=True,
    )
    start = time.perf_counter()
    model = load_smollm2(max_tokens=args.max_tokens)
    rows.append(
        (
            "load (" + ("cached" if cached else "cold") + ")",
            f"{time.perf_counter() - start:.1f} s  [{weights_dir()}]",
        )
    )

    question = [{"role": "user", "content": "Give me two tips for staying focused while studying."}]
    print("\nuser: " + question[0]["content"] + "\nassistant: ", end="", flush=True)
    start, first = time.perf_counter(), None
    pieces = []
    for piece in model.stream(question):
        first = first or time.perf_counter() - start
        pieces.append(piece)
        print(piece, end="", flush=True)
    elapsed = time.perf_counter() - start
    done = model.complete(question)  # the same greedy reply, with its tokens and log-probs
    assert done.text == "".join(pieces)
    n = len(done.token_ids)
    rows += [
        ("time to first token", f"{first or 0:.2f} s"),
        ("streamed tokens", f"{n} in {elapsed:.1f} s = {n / elapsed:.1f} tok/s (1 thread)"),
        ("mean token log-prob", f"{sum(done.logprobs) / n:.2f}"),
    ]

    def add(a: int, b: int) -> int:
        """Add two integers.

        Args:
            a: the first integer
            b: the second integer
        """
        return a + b

    def get_weather(city: str) -> str:
        """Get the current weather in a city.

        Args:
            city: the city name
        """
        return f"Sunny, 22 C in {city}"

    print("\n\ntool round: 'What is 17 plus 25?' with tools add, get_weather", flush=True)
    start = time.perf_counter()
    result = run_agent(
        model,
        [{"role": "user", "content": "What is 17 plus 25?"}],
        [add, get_weather],
        first_tool_choice="required",
        max_steps=2,
        max_tokens=16,
    )
    for m in result.messages[1:]:
        print(f"  {m['role']}: {m.get('tool_calls') or m['content']}")
    run = result.tool_runs[0] if result.tool_runs else None
    rows += [
        (
            "tool call",
            f"{run.name}({run.arguments}) -> {run.result if run.error is None else run.error}"
            if run
            else "none",
        ),
        ("final answer", repr(result.text)),
        ("tool round", f"{time.perf_counter() - start:.1f} s"),
    ]

    fig, ax = pyplot().subplots(figsize=(max(6, 0.35 * n), 3))
    ax.bar(range(n), done.logprobs, color="tab:blue")
    ax.set_xticks(range(n), [repr(t)[1:-1] for t in done.tokens], rotation=90, fontsize=7)
    ax.set_ylabel("log p(token | prefix)")
    ax.set_title("SmolLM2-135M-Instruct, greedy reply: per-token log-probabilities")
    fig.tight_layout()
    figure = save_figure(fig, args.out / "token_logprobs.png")
    rows.append(("figure", str(figure)))
    print("\n" + table(rows, ["step", "result"]))
    return 0 if run and run.error is None else 1


if __name__ == "__main__":
    sys.exit(main())
