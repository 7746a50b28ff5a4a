"""SCM's public API: one valid call of each callable, for the battery (a tiny SCM trained for one
epoch on 24 generated replies, its word tokenizer, a checkpoint of it in a scratch folder)."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import paperplug_scm as s
import torch
from paperplug_llm import ScriptedChatModel

from paperplug.testing import Sweep
from public_api import SCRIPTED

# SCMTrainer's constructor: the Trainer role's contract sweeps it (packages/scm/tests/
# test_contract.py); its methods are swept here.
REASONS = {
    "Decision": "a result type (what a monitor's push returns)",
    "EncodedExample": "a result type (what token_labels returns)",
    "MonitoredGeneration": "a result type (what monitored_generate returns)",
}
RULE = {"theta": [0, 1.5, "0.5"], "k": [0], "window": [0]}


def monitor_started(model: s.SCMModel, tokenizer: object) -> s.StreamingMonitor:
    """A monitor whose default stream has started on a prompt."""
    monitor = s.StreamingMonitor(model, tokenizer, theta=0.5, k=2)
    monitor.start("hi")
    return monitor


def sweeps() -> dict[str, Sweep]:
    data = s.make_fineharm_like(24, seed=4)
    trainer = s.SCMTrainer(
        epochs=1, progress=False, tiny={"hidden_size": 32, "num_layers": 1}, seed=0
    ).fit(data)
    model, tokenizer = trainer.model_, trainer.tokenizer_
    folder = Path(tempfile.mkdtemp())
    checkpoint = trainer.save(folder / "ckpt")
    jsonl = folder / "rows.jsonl"
    jsonl.write_text("".join(json.dumps(ex) + "\n" for ex in data[:3]))
    release = folder / "FineHarm"  # the released layout: one JSON list per split
    release.mkdir()
    (release / "train_new.json").write_text(json.dumps(data[:3]))
    encoded = s.encode_fineharm(data[:2], tokenizer)
    monitor = s.StreamingMonitor(model, tokenizer, theta=0.5, k=2)
    scores = [[0.1, 0.9, 0.95], [0.1, 0.2, 0.1]]
    settings = {"theta": 0.5, "k": 2, "window": None}
    logits = torch.zeros(2, 2), torch.zeros(2, 3, 2), torch.ones(2, 3, dtype=torch.bool)
    counter = s.DelayKCounter(0.5, 2)
    counter.update(0.7), counter.update(0.1)
    inc = s.IncrementalTokens(tokenizer)
    ids = tokenizer("some text", add_special_tokens=False)["input_ids"]
    vocab = len(tokenizer)
    hidden = torch.zeros(1, 3, 32)
    examples = data[:2]
    return {
        "DelayKCounter": Sweep(s.DelayKCounter, (0.5, 2), bad_params=RULE),
        "StreamingMonitor.push": Sweep(
            monitor_started(model, tokenizer).push,
            ("Some text ",),
            reasons={"text_delta": "any text"},
        ),
        "StreamingMonitor.push_ids": Sweep(
            monitor_started(model, tokenizer).push_ids,
            (ids,),
            bad_params={"ids": [[-1], [vocab], [ids[0], 2.5]]},
        ),
        "StreamingMonitor.check": Sweep(
            s.StreamingMonitor(model, tokenizer, theta=0.5, k=2).check,
            ("Some text ",),
            {"context": {"prompt": "hi"}},
            bad_params={"context": [{"prompt": 3}, {"messages": 3}, ["prompt"]]},
            reasons={"payload": "any text is a reply so far"},
        ),
        "StreamingMonitor.start": Sweep(
            s.StreamingMonitor(model, tokenizer, theta=0.5, k=2).start,
            ("hi",),
            reasons={"prompt": "any text"},
        ),
        "StreamingMonitor.session": Sweep(
            s.StreamingMonitor(model, tokenizer, theta=0.5, k=2).session,
            ("chat-1",),
            bad_params={"conversation_id": [["chat"], {"a": 1}]},
            accepts={"conversation_id:type": "any hashable names a conversation"},
        ),
        "StreamingMonitor.end_session": Sweep(
            s.StreamingMonitor(model, tokenizer, theta=0.5, k=2).end_session,
            ("chat-1",),
            bad_params={"conversation_id": [["chat"], {"a": 1}]},
            accepts={"conversation_id:type": "any hashable names a conversation"},
        ),
        "MonitorSession.start": Sweep(
            s.MonitorSession(monitor).start, ("hi",), reasons={"prompt": "any text"}
        ),
        "MonitorSession.push_ids": Sweep(
            s.MonitorSession(monitor).start("hi").push_ids,
            (ids,),
            bad_params={"ids": [[-1], [vocab], [ids[0], 2.5]]},
        ),
        "SCMTrainer.monitor": Sweep(
            trainer.monitor, kwargs={"theta": 0.5, "k": 2}, bad_params={"k": [0], "theta": [1.5]}
        ),
        "SCMTrainer.evaluate": Sweep(
            trainer.evaluate,
            (examples,),
            {"theta": 0.5, "k": 2},
            bad_params={"theta": [0, 1.5], "k": [0], "examples": [[], [{"prompt": "hi"}]]},
        ),
        "SCMTrainer.full_detection": Sweep(
            trainer.full_detection,
            (examples,),
            bad_params={"examples": [[], [{"prompt": "hi"}]]},
        ),
        "SCMTrainer.save": Sweep(trainer.save, (folder / "saved",), bad_params={"path": [3]}),
        "SCMModel.scores": Sweep(
            model.scores,
            (hidden,),
            bad_params={"head": ["both"], "hidden": [torch.zeros(1, 3, 5), torch.zeros(0, 32)]},
        ),
        "SCMModel.hidden": Sweep(
            model.hidden,
            (torch.tensor([ids]),),
            bad_params={
                "input_ids": [torch.tensor([[-1]]), torch.tensor([[vocab]]), torch.zeros(1, 2)],
                "attention_mask": [torch.ones(1, len(ids) + 1, dtype=torch.long)],
                "position_ids": [torch.zeros(1, len(ids) + 1, dtype=torch.long)],
            },
            reasons={"cache": "a KV cache this method returned: whatever the backbone takes"},
            width=False,
        ),
        "SCMModel.save_pretrained": Sweep(
            model.save_pretrained, (folder / "pretrained",), bad_params={"path": [3]}
        ),
        "DelayKCounter.truncate": Sweep(counter.truncate, (1,), bad_params={"n": [-1, 3]}),
        "IncrementalTokens.encode": Sweep(inc.encode, ("some text",), reasons={"text": "any text"}),
        "IncrementalTokens.update": Sweep(
            s.IncrementalTokens(tokenizer).update,
            ("some text", 4, True),
            bad_params={"end": [-1, 10]},
            reasons={"text": "any text"},
        ),
        "DelayKCounter.update": Sweep(
            s.DelayKCounter(0.5, 2).update, (0.7,), bad_params={"score": [1.5]}
        ),
        "DualSupervisionLoss": Sweep(
            s.DualSupervisionLoss,
            bad_params={"alpha": [-0.1, 1.5], "gamma": [-1.0], "reduce": ["sum"]},
        ),
        "IncrementalTokens": Sweep(s.IncrementalTokens, (tokenizer,), bad_params={"mode": ["all"]}),
        "MonitorSession": Sweep(s.MonitorSession, (monitor,)),
        "MonitorSession.push": Sweep(
            s.MonitorSession(monitor).start("hi").push,
            ("Some text ",),
            reasons={"text_delta": "any text"},
        ),
        "SCMModel": Sweep(
            s.SCMModel,
            (model.backbone,),
            bad_params={"dropout": [-0.1, 1.0], "frame": [0], "seed": [-1]},
        ),
        "StreamingMonitor": Sweep(
            s.StreamingMonitor,
            (model, tokenizer),
            {"theta": 0.5, "k": 2},
            bad_params={
                **RULE,
                "rule": ["greedy"],
                "head": ["both"],
                "max_hold": [0],
                "retokenise": ["never"],
                "max_sessions": [0],
                "batch": ["yes"],
            },
        ),
        "binary_metrics": Sweep(
            s.binary_metrics,
            ([0, 1, 1], [0, 1, 0]),
            bad_params={"pred": [[2, 0, 1]], "labels": [[0, 1]]},
        ),
        "build_word_tokenizer": Sweep(
            s.build_word_tokenizer,
            (["a b", "c d"],),
            bad_params={"min_count": [0], "texts": [[3], []]},
        ),
        "check_examples": Sweep(
            s.check_examples,
            (data[:2], "train"),
            reasons={"name": "the argument's name in errors"},
            accepts={"value:type": "its errors name the argument as `name` gives it ('train')"},
        ),
        "choose_theta_k": Sweep(
            s.choose_theta_k,
            (scores, [1, 0]),
            {"thetas": [0.5, 0.8], "ks": [1, 2]},
            bad_params={
                "thetas": [[], [1.5]],
                "ks": [[], [0]],
                "window": [0],
                "labels": [[1, 2]],
                "scores": [[[1.5], [0.1]]],
            },
            width=False,
        ),
        "delay_k_stop": Sweep(
            s.delay_k_stop,
            ([0.1, 0.9, 0.95],),
            settings,
            bad_params={**RULE, "scores": [[1.5], "abc"]},
            width=False,
        ),
        "encode_fineharm": Sweep(
            s.encode_fineharm,
            (data[:2], tokenizer),
            bad_params={"sep": [3], "max_length": [0]},
        ),
        "hold_back": Sweep(
            s.hold_back,
            ("Some text", 4, 8),
            bad_params={"judged": [-1, 100], "max_hold": [-1]},
            reasons={"text": "any text"},
        ),
        "load_checkpoint": Sweep(
            s.load_checkpoint,
            (checkpoint,),
            bad_params={"path": [3], "device": ["no-such-device"]},
        ),
        "load_data": Sweep(
            s.load_data,
            (0, 4, 2, 2),
            bad_params={"seed": [-1], "n_train": [0], "n_val": [-1], "n_test": [-1]},
        ),
        "logic_consistency_loss": Sweep(
            s.logic_consistency_loss, logits, bad_params={"reduce": ["sum"]}
        ),
        "long_reply": Sweep(s.long_reply, (50,), bad_params={"n_words": [0], "seed": [-1]}),
        "make_fineharm_like": Sweep(
            s.make_fineharm_like,
            (4,),
            bad_params={"n": [0], "harmful_fraction": [1.5], "seed": [-1]},
        ),
        "monitored_generate": Sweep(
            s.monitored_generate,
            (ScriptedChatModel(lambda messages, **kw: "Fine words here."), monitor, "hi"),
            bad_params={"prompt": [3]},
            reasons={"conversation_id": "any hashable names a conversation"},
            accepts={"conversation_id:type": "any hashable names a conversation"},
            mutates={"chat_model": SCRIPTED},
        ),
        "n_words": Sweep(s.n_words, (data[0],)),
        "naive_stop": Sweep(
            s.naive_stop,
            ([0.1, 0.9],),
            bad_params={"theta": [0, 1.5], "scores": [[1.5], "abc"]},
            width=False,
        ),
        "notional_labels": Sweep(
            s.notional_labels, (["a", "b"], True), bad_params={"harmful": [1], "words": [[3]]}
        ),
        "prompt_of": Sweep(s.prompt_of, ({"prompt": "hi"},)),
        "load_fineharm": Sweep(
            s.load_fineharm,
            (release, "train"),
            bad_params={
                "path_or_name": ["/no/such/folder", "./missing", 3],
                "split": ["test", "", 3],
            },
        ),
        "read_jsonl": Sweep(s.read_jsonl, (jsonl,), bad_params={"path": [3]}),
        "response_text": Sweep(s.response_text, (data[0],), bad_params={"sep": [3]}),
        "save_checkpoint": Sweep(
            s.save_checkpoint,
            (folder / "again", model, tokenizer, {"theta": 0.5, "k": 2}),
            bad_params={"path": [3]},
        ),
        "score_responses": Sweep(
            s.score_responses, (model, encoded), bad_params={"head": ["both"], "batch_size": [0]}
        ),
        "stitch_replies": Sweep(
            s.stitch_replies,
            (data, 2),
            {"min_words": 20, "max_words": 60},
            bad_params={
                "n": [-1],
                "min_words": [0],
                "max_words": [10],
                "harmful_fraction": [1.5],
                "seed": [-1],
            },
        ),
        "stream_metrics": Sweep(
            s.stream_metrics,
            (scores, [1, 0]),
            settings,
            bad_params={**RULE, "labels": [[1, 2]], "scores": [[[1.5], [0.1]]]},
            width=False,
        ),
        "tail_retokenisation_is_exact": Sweep(
            s.tail_retokenisation_is_exact, (tokenizer,), reasons={"text": "any text is a probe"}
        ),
        "token_labels": Sweep(
            s.token_labels, (data[0], tokenizer), bad_params={"sep": [3], "max_length": [0]}
        ),
        "validate_example": Sweep(
            s.validate_example, (data[0],), reasons={"name": "the argument's name in errors"}
        ),
    }
