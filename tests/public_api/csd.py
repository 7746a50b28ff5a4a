"""CSD's public API: one valid call of each callable, for the battery (a four-claim discrete LM
with a dead end, a lookup scorer, scripted chat models; the tiny Hugging Face model where a
real one is needed)."""

from __future__ import annotations

import paperplug_csd as c
from paperplug_llm import HFChatModel, ScriptedChatModel, build_tiny_model

from paperplug.testing import Sweep

# CSD and RiskCertifier's constructors: the Defense and Solver roles' contracts sweep them
# (packages/csd/tests/test_contract.py); their methods are swept here.
REASONS = {
    "CSDResult": "a result type (what a decoder's generate returns)",
    "Certificate": "a result type (what RiskCertifier.bound returns)",
    "LTTResult": "a result type (what learn_then_test returns)",
    "OnlineRun": "a result type (what run_online returns)",
    "ClaimGenerator": "a typing Protocol: nothing to call",
    "ClaimScorer": "a typing Protocol: nothing to call",
    "ClaimStream": "made by ClaimStreamDecoder.stream (its arguments checked there)",
}
CLAIMS = ["Ant is safe.", "Bee is safe.", "Unsafe one.", "Unsafe two."]
SCORES = {"Ant is safe.": 0.1, "Bee is safe.": 0.3, "Unsafe one.": 0.7, "Unsafe two.": 0.9}
FIRST = [0.35, 0.35, 0.2, 0.1, 0.0]
TRANSITION = [
    [0.3, 0.1, 0.1, 0.0, 0.5],
    [0.0, 0.0, 0.6, 0.3, 0.1],
    [0.2, 0.2, 0.2, 0.2, 0.2],
    [0.2, 0.2, 0.2, 0.2, 0.2],
]
MESSAGES = [{"role": "user", "content": "hello"}]
BOUND = {"k": [-1, 11], "n": [0], "delta": [0.0, 1.0]}
DECODE = {"budget": [-1], "depth": [-1], "tau": [1.5, -0.1]}


def _score(prompt: str, prefix: str, claim: str) -> float:
    return SCORES.get(claim.strip(), 0.9)  # a whole reply (guard_then_refuse): unsafe


class OutputGuard:
    """An output-stage defense: risk 0.9 for a text saying "Unsafe"."""

    stage = "output"

    def check(self, payload, context=None):
        from paperplug import Verdict

        risk = 0.9 if "Unsafe" in str(payload) else 0.1
        return Verdict(payload, valid=risk < 0.5, risk=risk)


def sweeps() -> dict[str, Sweep]:
    lm = c.DiscreteClaimLM(CLAIMS, FIRST, TRANSITION, max_claims=3)
    scorer = c.FunctionScorer(_score)
    decoder = c.ClaimStreamDecoder(lm, scorer, tau=0.5, budget=1, depth=1)
    accept = c.accept_from(lm, scorer, 0.5)
    tiny = HFChatModel(*build_tiny_model(seed=0))
    judge = ScriptedChatModel(lambda messages, **kw: "safe")
    online = c.OnlineTau(0.2)
    seeded = {"seed": [-1], "messages": [3]}
    safe = c.SafeDecodingChatModel(lm, decoder)
    encode = lambda texts: [[len(t)] for t in texts]  # noqa: E731
    classifier = c.ClaimClassifier(encode).fit(["a", "bbbbbb"], [0, 1])
    claim_args = ("hi", "", "Ant is safe.")
    texts = {"prompt": "any text is a prompt", "prefix": "any text", "claim": "any text"}
    messages = {"messages": [3, [], [{"content": "hi"}]], "seed": [-1]}
    return {
        "ClaimStreamDecoder.stream": Sweep(decoder.stream, ("hi",), {"seed": 0}, bad_params=seeded),
        "SafeDecodingChatModel.chat": Sweep(
            safe.chat, (MESSAGES,), {"seed": 0}, bad_params=messages
        ),
        "SafeDecodingChatModel.stream": Sweep(
            safe.stream, (MESSAGES,), {"seed": 0}, bad_params=messages
        ),
        "RiskCertifier.bound": Sweep(
            c.RiskCertifier().bound, ([0, 1, 0],), bad_params={"risks": [[2], [0.5], [], [-1]]}
        ),
        "ClaimSegmenter.split_claims": Sweep(
            c.ClaimSegmenter(1, 64).split_claims,
            ("One claim. Two claims.",),
            bad_params={"tokenize": [3]},
            reasons={"text": "any text"},
        ),
        "ClaimSegmenter.ends_claim": Sweep(
            c.ClaimSegmenter(1, 64).ends_claim,
            ("One claim.", 2),
            bad_params={"n_tokens": [-1]},
            reasons={"text": "any text"},
        ),
        "ClaimClassifier.fit": Sweep(
            c.ClaimClassifier(encode).fit,
            (["a", "bbbbbb"], [0, 1]),
            bad_params={"labels": [[0, 2], [0], [0, 0]], "claims": [[], [3, "a"]]},
        ),
        "ClaimClassifier.predict_proba": Sweep(
            classifier.predict_proba, (["a", "bb"],), bad_params={"claims": [[3], "ab"]}
        ),
        "ClaimClassifier.score_claim": Sweep(classifier.score_claim, claim_args, reasons=texts),
        "FunctionScorer.score_claim": Sweep(scorer.score_claim, claim_args, reasons=texts),
        "DefenseScorer.score_claim": Sweep(
            c.DefenseScorer(OutputGuard()).score_claim, claim_args, reasons=texts
        ),
        "JudgeScorer.score_claim": Sweep(
            c.JudgeScorer(ScriptedChatModel(lambda messages, **kw: "safe")).score_claim,
            claim_args,
            reasons=texts,
        ),
        "DiscreteClaimLM.probs": Sweep(lm.probs, ((0, 1),), bad_params={"prefix": [(-1,), (4,)]}),
        "DiscreteClaimLM.claim_text": Sweep(lm.claim_text, (1,), bad_params={"i": [-1, 4]}),
        "DiscreteClaimLM.start": Sweep(
            lm.start,
            ("hi",),
            {"seed": 0},
            bad_params={"seed": [-1]},
            reasons={"messages": "unused: the discrete LM draws claims whatever the prompt"},
            accepts={"messages:type": "unused: the discrete LM draws claims whatever the prompt"},
        ),
        "ChatClaimGenerator.start": Sweep(
            c.ChatClaimGenerator(ScriptedChatModel(["One. Two."])).start,
            (MESSAGES,),
            {"seed": 0},
            bad_params=messages,
        ),
        "HFClaimGenerator.start": Sweep(
            c.HFClaimGenerator(tiny, max_tokens=8).start,
            (MESSAGES,),
            {"seed": 0},
            bad_params=messages,
        ),
        "CSD.decoder": Sweep(
            c.CSD(scorer, budget=1).decoder, (lm,), bad_params={"model": [3, "/no/such/model"]}
        ),
        "ChatClaimGenerator": Sweep(
            c.ChatClaimGenerator,
            (ScriptedChatModel(["One. Two."]),),
            bad_params={
                "temperature": [-0.1],
                "max_tokens": [0],
                "request_kw": [3],
                "segmenter": [3],
            },
        ),
        "ClaimClassifier": Sweep(
            c.ClaimClassifier, (lambda texts: [[len(t)] for t in texts],), bad_params={"C": [0.0]}
        ),
        "Claim": Sweep(
            c.Claim, ("Ant is safe.", [1, 2]), bad_params={"text": [3], "token_ids": [[1.5], [-1]]}
        ),
        "ClaimSegmenter": Sweep(
            c.ClaimSegmenter, (5, 64), bad_params={"min_tokens": [0], "max_claim_tokens": [0, 4]}
        ),
        "ClaimStreamDecoder": Sweep(
            c.ClaimStreamDecoder,
            (lm, scorer),
            {"tau": 0.5, "budget": 1, "depth": 1},
            bad_params={**DECODE, "refusal": [3], "segmenter": [3]},
        ),
        "ClaimStreamDecoder.generate": Sweep(
            decoder.generate, ("hi",), {"seed": 0}, bad_params=seeded
        ),
        "DefenseScorer": Sweep(c.DefenseScorer, (OutputGuard(),), bad_params={"use": ["both"]}),
        "DiscreteClaimLM": Sweep(
            c.DiscreteClaimLM,
            (CLAIMS, FIRST, TRANSITION),
            {"max_claims": 3},
            bad_params={
                "max_claims": [0],
                "claims": [[], [3]],
                "first": [[0.5, 0.6, 0, 0, 0]],
                "transition": [[[1.0, 0, 0, 0, 0]]],
            },
            width=False,
        ),
        "FunctionScorer": Sweep(c.FunctionScorer, (_score,)),
        "HFClaimGenerator": Sweep(
            c.HFClaimGenerator,
            (tiny,),
            {"max_tokens": 8},
            bad_params={
                "temperature": [0.0],
                "top_p": [0.0, 1.5],
                "top_k": [-1],
                "max_tokens": [0],
                "segmenter": [3],
            },
            reasons={"tokenizer": "the model's own when None; a Hugging Face tokenizer"},
        ),
        "JudgeScorer": Sweep(c.JudgeScorer, (judge,), bad_params={"template": ["no fields", 3]}),
        "OnlineTau": Sweep(
            c.OnlineTau, (0.2,), bad_params={"alpha": [0.0, 1.0], "eta": [0.0], "tau0": [1.5]}
        ),
        "OnlineTau.update": Sweep(c.OnlineTau(0.2).update, (1,), bad_params={"err": [2, 0.5]}),
        "SafeDecodingChatModel": Sweep(
            c.SafeDecodingChatModel,
            (lm, decoder),
            bad_params={"seed": [-1]},
            accepts={"model:type": "the wrapped model, only shown in repr: any object"},
        ),
        "accept_from": Sweep(
            c.accept_from,
            (lm, scorer, 0.5),
            bad_params={"tau": [1.5, -0.1]},
            reasons={"prompt": "any text is a prompt"},
        ),
        "as_scorer": Sweep(
            c.as_scorer, (scorer,), reasons={"name": "the argument's name in errors"}
        ),
        "bentkus_bound": Sweep(c.bentkus_bound, (2, 10, 0.1), bad_params=BOUND),
        "claim_generator": Sweep(c.claim_generator, (lm,), bad_params={"segmenter": [3]}),
        "clopper_pearson_bound": Sweep(c.clopper_pearson_bound, (2, 10, 0.1), bad_params=BOUND),
        "csd_distribution": Sweep(
            c.csd_distribution, (lm, accept), bad_params={"budget": [-1], "depth": [-1]}
        ),
        "guard_then_refuse": Sweep(
            c.guard_then_refuse, (decoder, "hi"), {"seed": 0}, bad_params=seeded
        ),
        "hb_bound": Sweep(c.hb_bound, (2, 10, 0.1), bad_params=BOUND),
        "hb_p_value": Sweep(
            c.hb_p_value, (2, 10, 0.1), bad_params={"k": [-1, 11], "n": [0], "alpha": [0.0, 1.0]}
        ),
        "hoeffding_bound": Sweep(c.hoeffding_bound, (2, 10, 0.1), bad_params=BOUND),
        "learn_then_test": Sweep(
            c.learn_then_test,
            ([[0, 1, 0], [0, 0, 1], [1, 0, 0], [0, 0, 0]], [0.2, 0.5, 0.8]),
            {"alpha": 0.5},
            bad_params={
                "alpha": [0.0, 1.0],
                "delta": [0.0, 1.0],
                "method": ["t-test"],
                "taus": [[], [1.5]],
                "losses": [[[0, 1]], [[0, 2, 0]]],
            },
        ),
        "minilm_encoder": Sweep(
            c.minilm_encoder, kwargs={"device": "cpu"}, bad_params={"device": ["nodevice"]}
        ),
        "run_online": Sweep(
            c.run_online,
            (decoder, ["a", "b"], lambda prompt, result: result.fallback, online),
            bad_params={"seed": [-1], "prompts": [[]]},
            mutates={
                "online": "the online threshold learns from each step it sees (the paper's online tau)"
            },
        ),
        "stop_rule": Sweep(
            c.stop_rule, (decoder, "hi"), {"seed": 0}, bad_params={"k": [0], **seeded}
        ),
        "target_distribution": Sweep(c.target_distribution, (lm, accept)),
        "total_variation": Sweep(
            c.total_variation, ({(0,): 0.5, (1,): 0.5}, {(0,): 1.0}), bad_params={"p": [{(0,): -1}]}
        ),
        "unguarded": Sweep(c.unguarded, (decoder, "hi"), {"seed": 0}, bad_params=seeded),
    }
