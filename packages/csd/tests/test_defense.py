"""CSD as a decode-stage Defense: composed with an output monitor around a Hugging Face chat
model, end to end through `Guard.wrap`."""

import torch
from paperplug_csd import CSD, SafeDecodingChatModel
from paperplug_llm import HFChatModel, build_tiny_model

from paperplug import Verdict, compose


class NoQMonitor:
    """An output-stage monitor: flags replies holding the letter q."""

    stage = "output"

    def __init__(self):
        self.prompts = []

    def check(self, payload, context=None):
        self.prompts.append((context or {}).get("prompt"))
        return Verdict(payload, "q" not in payload, float("q" in payload))


def test_compose_csd_with_an_output_monitor_and_wrap_a_hf_model():
    torch.set_num_threads(1)
    model = HFChatModel(*build_tiny_model(seed=2), max_tokens=30)
    flag = lambda p, x, c: float(any(ch in c for ch in "aeiou"))  # noqa: E731
    csd = CSD(flag, tau=0.5, budget=3, depth=1, min_tokens=3, max_claim_tokens=8, max_tokens=30)
    monitor = NoQMonitor()
    guarded = compose(csd, monitor).wrap(model)
    assert isinstance(guarded.model, SafeDecodingChatModel) and guarded.model.model is model
    reports = []
    for i in range(4):
        reply = guarded.chat([{"role": "user", "content": f"tell me {i}"}])
        report = guarded.model.last_report
        reports.append(report)
        assert all(flag("", "", c) == 0 for c in report.claims)  # only accepted claims shown
        if guarded.last_verdict.valid:
            assert reply == report.text
    assert sum(r.n_rejected for r in reports) > 0
    assert monitor.prompts and monitor.prompts[-1] == "tell me 3"  # the monitor saw the prompt
    pieces = list(guarded.model.stream([{"role": "user", "content": "x"}], seed=4))
    assert "".join(pieces) == guarded.model.last_report.text


def test_safe_model_is_reproducible_from_the_defense_seed():
    model = HFChatModel(*build_tiny_model(seed=2), max_tokens=20)
    flag = lambda p, x, c: float("e" in c)  # noqa: E731
    a = CSD(flag, seed=7, min_tokens=3, max_claim_tokens=8).check(model).payload
    b = CSD(flag, seed=7, min_tokens=3, max_claim_tokens=8).check(model).payload
    msgs = [{"role": "user", "content": "hi"}]
    assert [a.chat(msgs) for _ in range(3)] == [b.chat(msgs) for _ in range(3)]
