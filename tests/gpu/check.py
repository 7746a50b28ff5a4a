"""GPU checks of the GPU-optional packages: each runs on CUDA and is compared with the CPU.

Run on a lent CUDA machine with `bash tests/gpu/run.sh`; `GPU_DEV=cpu python tests/gpu/check.py`
is a dry run of the script here. Not collected by pytest (no test_ prefix)."""

import json
import os
import time
import traceback

import numpy as np
import torch

torch.set_num_threads(4)
OUT = os.environ.get("OUT", "/tmp")
DEV = os.environ.get("GPU_DEV", "cuda")  # GPU_DEV=cpu: a dry run of the script here
results = {}


def check(name):
    def deco(fn):
        t = time.time()
        try:
            results[name] = {"ok": True, **fn()}
        except Exception as exc:  # report and go on
            results[name] = {
                "ok": False,
                "error": f"{type(exc).__name__}: {exc}",
                "trace": traceback.format_exc()[-1500:],
            }
        results[name]["seconds"] = round(time.time() - t, 2)
        print(name, json.dumps(results[name], default=str)[:1500], flush=True)
        return fn

    return deco


@check("llm: HFChatModel greedy + continuation_logprobs, cuda vs cpu")
def _():
    from paperplug_llm import HFChatModel, build_tiny_model, continuation_logprobs

    model, tok = build_tiny_model(seed=0, hidden_size=64)
    cpu = HFChatModel(model, tok)
    msgs = [{"role": "user", "content": "Hello there"}]
    a = cpu.complete(msgs, temperature=0, max_tokens=12).text
    model2, tok2 = build_tiny_model(seed=0, hidden_size=64)
    gpu = HFChatModel(model2, tok2, device=DEV)
    b = gpu.complete(msgs, temperature=0, max_tokens=12).text
    cands = [[5, 6, 7], [9], [10, 11]]
    lc = continuation_logprobs(cpu.model, [1, 2, 3, 4], cands)
    lg = continuation_logprobs(gpu.model, [1, 2, 3, 4], cands)
    diff = max(abs(x - y) for u, v in zip(lc, lg, strict=True) for x, y in zip(u, v, strict=True))
    return {"same_greedy_text": a == b, "max_logprob_diff": diff}


@check("scm: SCMTrainer on cuda, scores vs the same checkpoint on cpu")
def _():
    import tempfile

    from paperplug_scm import SCMTrainer, make_fineharm_like

    data = make_fineharm_like(48, seed=0)
    t = SCMTrainer(
        device=DEV, tiny={"hidden_size": 32, "num_layers": 1}, epochs=1, progress=False
    ).fit(data[:32], data[32:])
    path = tempfile.mkdtemp()
    t.save(path)
    cpu = SCMTrainer.load(path, device="cpu")
    gpu = SCMTrainer.load(path, device=DEV)
    sc, _ = cpu.score(data[32:40])
    sg, _ = gpu.score(data[32:40])
    diff = max(abs(a - b) for u, v in zip(sc, sg, strict=True) for a, b in zip(u, v, strict=True))
    mon_c = cpu.monitor().check(
        "Here is how to do it", {"prompt": data[33]["prompt"], "final": True}
    )
    mon_g = gpu.monitor().check(
        "Here is how to do it", {"prompt": data[33]["prompt"], "final": True}
    )
    return {
        "max_token_score_diff": diff,
        "monitor_same_valid": mon_c.valid == mon_g.valid,
        "monitor_risk": [mon_c.risk, mon_g.risk],
    }


@check("nesy: trainer cuda vs cpu (same seed), digits MAX-3, 1000 bags, 8 epochs")
def _():
    from paperplug_nesy import NeSyImbalanceTrainer, max_of, report
    from paperplug_nesy.embedded import long_tailed_bags

    d = long_tailed_bags(max_of(3), 1000, rho=10, seed=0)
    out = {}
    for label, dev in (("cpu", "cpu"), ("gpu", DEV)):
        t0 = time.time()
        m = NeSyImbalanceTrainer(
            epochs=8, progress=False, device=dev, test_mitigation="carot", test_prior="uniform"
        ).fit(d.bags, d.s)
        out[label] = {
            "plain": report(m.predict(d.test_X), d.test_y)["balanced"],
            "carot": report(m.predict_calibrated(d.test_X), d.test_y)["balanced"],
            "fit_s": round(time.time() - t0, 2),
        }
        out[label + "_pred"] = m.predict(d.test_X)
    agree = float(np.mean(out.pop("cpu_pred") == out.pop("gpu_pred")))
    return {**out, "prediction_agreement": agree}


@check("kgram: MarkovICLTrainer on cuda (2 layers, 300 steps)")
def _():
    from paperplug_kgram import MarkovICLTrainer

    t0 = time.time()
    tr = MarkovICLTrainer(n_layers=2, steps=300, d_model=32, progress=False, device=DEV).fit()
    return {"final_gap": tr.history_["gap"][-1], "seconds_300_steps": round(time.time() - t0, 2)}


@check("eareranker: EAReranker on cuda vs cpu, planted relation")
def _():
    from paperplug_eareranker import EAReranker

    rng = np.random.default_rng(0)
    q = rng.normal(size=(600, 32)).astype(np.float32)
    d = rng.normal(size=(600, 32)).astype(np.float32)
    y = 1 / (1 + np.exp(-2 * (q[:, 0] * d[:, 1] + d[:, 2])))
    g = np.arange(600) // 6
    out = {}
    for label, dev in (("cpu", "cpu"), ("gpu", DEV)):
        t0 = time.time()
        m = EAReranker(d_model=64, layers=2, epochs=5, progress=False, device=dev).fit(
            q, d, y, groups=g
        )
        s = m.score(q[:100], d[:100])
        out[label] = {
            "corr_with_labels": float(np.corrcoef(s, y[:100])[0, 1]),
            "fit_s": round(time.time() - t0, 2),
        }
    return out


@check("adaptgrad: attributions of a cuda model vs the cpu model")
def _():
    from paperplug_adaptgrad.explainer import AdaptGrad

    net = torch.nn.Sequential(torch.nn.Linear(10, 16), torch.nn.Tanh(), torch.nn.Linear(16, 3))
    x = torch.rand(4, 10)
    a = AdaptGrad(seed=0).explain(net, x, target=0)
    b = AdaptGrad(seed=0).explain(net.to(DEV), x.to(DEV), target=0)
    va, vb = (
        np.asarray(a.values),
        np.asarray(b.values.cpu() if hasattr(b.values, "cpu") else b.values),
    )
    return {"relative_diff": float(np.abs(va - vb).sum() / np.abs(va).sum())}


@check("prime: PrimeMDM on cuda vs cpu (digits, ell=2, 300 steps)")
def _():
    from paperplug_prime import PrimeMDM
    from paperplug_prime.embedded import digit_tokens

    Xtr, Xte, _, _ = digit_tokens(0)
    out = {}
    for label, dev in (("cpu", "cpu"), ("gpu", DEV)):
        t0 = time.time()
        m = PrimeMDM(ell=2, steps=300, progress=False, device=dev).fit(Xtr)
        out[label] = {
            "fit_s": round(time.time() - t0, 2),
            "test_bits": m.nelbo(Xte, n_t=16),
            "idle64": m.sample(100, nfe=64)[1],
        }
    return out


@check("csd: claim decoding with KV rollback, HF model on cuda vs cpu")
def _():
    from paperplug_csd.decoding import ClaimStreamDecoder
    from paperplug_csd.scorers import FunctionScorer
    from paperplug_llm import HFChatModel, build_tiny_model

    scorer = FunctionScorer(
        lambda prompt, prefix, claim: float("e" in claim)
    )  # rejects claims with 'e'
    out = {}
    msgs = [{"role": "user", "content": "Tell me something."}]
    for label, dev in (("cpu", "cpu"), ("gpu", DEV)):
        model, tok = build_tiny_model(seed=0, hidden_size=64)
        chat = HFChatModel(model, tok, device=dev)
        t0 = time.time()
        r = ClaimStreamDecoder(chat, scorer, tau=0.5, budget=4).generate(
            msgs, seed=0, max_tokens=48
        )
        out[label] = {
            "resamples": r.n_resamples,
            "fallback": r.fallback,
            "tokens": r.tokens,
            "text_len": len(r.text),
            "unsafe_shown": any("e" in c for c in r.claims),
            "seconds": round(time.time() - t0, 2),
        }
    return out


@check("fixlip: exact FWBII of a tiny CLIP on cuda vs cpu")
def _():
    from paperplug_fixlip import exact_fwbii
    from paperplug_fixlip.embedded import make_mosaics, tiny_clip
    from paperplug_fixlip.masking import clip_game

    mosaic = make_mosaics(1, seed=0, split="test", min_digits=2)
    k = int(mosaic.attention[0].sum())
    vals = {}
    for label, dev in (("cpu", "cpu"), ("gpu", DEV)):
        model = tiny_clip(seed=0).to(dev)
        game = clip_game(model, mosaic.images[:1], mosaic.ids[:1, :k], device=dev)
        t0 = time.time()
        vals[label] = (
            np.asarray(exact_fwbii(game).values, dtype=float),
            round(time.time() - t0, 2),
        )
    return {
        "max_abs_diff": float(np.abs(vals["cpu"][0] - vals["gpu"][0]).max()),
        "seconds": {k: v[1] for k, v in vals.items()},
    }


with open(os.path.join(OUT, "gpu_results.json"), "w") as f:
    json.dump(results, f, indent=1, default=str)
print("ALL", {k: v["ok"] for k, v in results.items()})
