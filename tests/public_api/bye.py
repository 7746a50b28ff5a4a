"""BYE's public API: one valid call of each callable, for the battery (the tiny LLaVA of 16 × 16
images, a few synthetic rows; one epoch where something is fine-tuned)."""

from __future__ import annotations

import numpy as np
import paperplug_bye as b
import torch

from paperplug.battery import input_variants
from paperplug.testing import Sweep

# BYE and BackdoorPoisoning themselves: the Defense and Attack roles' contracts sweep them
# (packages/bye/tests/test_contract.py); their methods a user calls are swept here.
REASONS = {
    "Backdoored": "a result type (what backdoored_run returns)",
    "Clustering": "a result type (what cluster_suspicious returns)",
    "Detection": "a result type (what detect returns)",
    "LayerFit": "a result type (what fit_layer returns)",
    "LayerProfile": "a result type (what profile_layers returns)",
}
TEMPLATE = {"template": ["no placeholder", 3]}
SIZE_ONLY = "the count reads the image's size, not its pixels"
VOCAB = ["<pad>", "<image>", "<s>", "<unk>", "red", "blue"]
ANY_SIZE = "images of any size: the processor takes or refuses them (its own ValueError)"
TINY = {"n_train": 12, "n_test": 6, "epochs": 1, "image_size": 16, "hidden_size": 16}


def _entropy() -> np.ndarray:
    """(40, 3) entropies: layer 1 splits 10 low rows from 30 high ones, the others do not."""
    rng = np.random.default_rng(0)
    E = rng.normal(3.0, 0.05, size=(40, 3))
    E[:10, 1] = rng.normal(1.0, 0.05, size=10)
    return E


def sweeps() -> dict[str, Sweep]:
    E, rows = _entropy(), b.synthetic_vqa(6, image_size=16)
    model, processor = b.tiny_llava(hidden_size=16, num_layers=1, num_heads=1)
    batch = b.encode_prompts(processor, rows[:2])
    attention = torch.softmax(torch.randn(4, 3, 16, generator=torch.Generator().manual_seed(0)), -1)
    victim = b.embedded_victim(b.EmbeddedConfig(**TINY))
    run = b.backdoored_run(b.EmbeddedConfig(**TINY))
    poisoned = np.zeros(12, dtype=bool)
    poisoned[:3] = True
    detect_params = {
        "variant": ["collapse-ish"],
        "separation": [-1.0],
        "min_weight": [0.6, -0.1],
        "min_gap": [-1.0],
        "direction": ["high"],
        "test": ["t-test"],
        "standardize": ["yes"],
        "seed": [-1],
    }
    tokenizer = b.TinyProcessor(VOCAB, image_seq_length=4)
    patches = b.TinyProcessor(VOCAB, patch_size=4)
    bye = b.BYE(model, processor)
    return {
        "BYE.detect": Sweep(
            bye.detect,
            (E,),
            bad_params={"variant": ["collapse-ish"], "min_gap": [-1.0]},
            width=False,
        ),
        "BackdoorPoisoning.poison": Sweep(
            b.BackdoorPoisoning(b.PatchTrigger(), poison_rate=0.5, seed=0).poison,
            (rows,),
            {"budget": 2},
            bad_params={"budget": [-1]},
            accepts={"dataset[0]['image']:width": ANY_SIZE},
        ),
        "BackdoorPoisoning.attack_success": Sweep(
            b.BackdoorPoisoning(b.PatchTrigger(), seed=0).attack_success,
            (victim, victim.base_model),
        ),
        "BYE.resolve": Sweep(bye.resolve, ({"model": model},), bad_params={"context": [3]}),
        "BYE.entropy": Sweep(
            bye.entropy,
            (rows[:2],),
            bad_params={"context": [3]},
            accepts={"dataset[0]['image']:width": ANY_SIZE},
        ),
        "Victim.fine_tune": Sweep(
            victim.fine_tune,
            (rows[:2],),
            bad_params={"dataset": [[], [{"image": 3}]]},
            accepts={"dataset[0]['image']:width": ANY_SIZE},
        ),
        "Victim.clean_accuracy": Sweep(victim.clean_accuracy, (victim.base_model,)),
        "TinyProcessor.tokenize": Sweep(
            tokenizer.tokenize,
            ("<image> red blue",),
            {"image_tokens": 2},
            bad_params={"image_tokens": [0, -1]},
            reasons={"text": "any text: unknown words become <unk>"},
        ),
        "TinyProcessor.image_tokens": Sweep(
            patches.image_tokens,
            (torch.zeros(3, 16, 16),),
            bad_params={"image": [torch.zeros(3, 2, 2), torch.zeros(16)]},
            accepts={
                "image:nan": SIZE_ONLY,
                "image:inf": SIZE_ONLY,
                "image:dtype": SIZE_ONLY,
                "image:width": "images of any size: a wider one gives more patches",
            },
        ),
        "EmbeddedConfig.rows": Sweep(
            b.EmbeddedConfig(**TINY).rows, (4, 0), bad_params={"n": [0, -1], "seed": [-1]}
        ),
        "AttentionExtractor": Sweep(
            b.AttentionExtractor,
            (model, processor),
            {"batch_size": 2},
            bad_params={"batch_size": [0], "layers": [[3]], **TEMPLATE},
            reasons={"image_token_mask": "a callable (None: the model's image token id)"},
        ),
        "AttentionExtractor.extract": Sweep(
            b.AttentionExtractor(model, processor, batch_size=2).extract,
            (rows[:2],),
            accepts={"dataset[0]['image']:width": ANY_SIZE},
        ),
        "BlendTrigger": Sweep(
            b.BlendTrigger, (0.2, 3), bad_params={"alpha": [0.0, 1.5], "seed": [-1]}
        ),
        "EmbeddedConfig": Sweep(
            b.EmbeddedConfig,
            kwargs=TINY,
            bad_params={
                "n_train": [0],
                "n_test": [0],
                "epochs": [0],
                "lr": [0.0],
                "hidden_size": [0],
                "image_size": [2],
                "trigger": ["laser"],
                "poison_rate": [1.5, -0.1],
                "target_answer": [""],
                "seed": [-1],
                "batch_size": [0],
                "num_layers": [0],
                "num_heads": [0],
                "kinds": [(), ("smell",)],
            },
        ),
        "PatchTrigger": Sweep(b.PatchTrigger, (4,), bad_params={"size": [0], "corner": ["middle"]}),
        "TextTrigger": Sweep(
            b.TextTrigger, ("cf",), bad_params={"word": [""], "position": ["middle"]}
        ),
        "TinyProcessor": Sweep(
            b.TinyProcessor,
            (VOCAB,),
            {"image_seq_length": 4},
            bad_params={
                "vocab": [[3], ["red"], ["<pad>", "<image>", "red"]],
                "image_seq_length": [0],
                "patch_size": [0],
                "padding_side": ["up"],
            },
        ),
        "Victim": Sweep(
            b.Victim,
            (model, processor, rows),
            {"epochs": 1},
            bad_params={
                "epochs": [0],
                "lr": [0.0],
                "batch_size": [0],
                "seed": [-1],
                "progress": [1],
                **TEMPLATE,
            },
            accepts={"test_set[0]['image']:width": ANY_SIZE},
        ),
        "answers_correct": Sweep(
            b.answers_correct,
            (model, processor, rows[:2]),
            bad_params={"answers": [["a"], [3, 4]], "batch_size": [0], **TEMPLATE},
            accepts={"dataset[0]['image']:width": ANY_SIZE},
        ),
        "attention_entropy": Sweep(
            b.attention_entropy, (attention,), bad_params={"relative": [1]}, width=False
        ),
        "backdoored_run": Sweep(b.backdoored_run, (b.EmbeddedConfig(**TINY),)),
        "cluster_suspicious": Sweep(
            b.cluster_suspicious,
            (E, [1]),
            bad_params={
                k: detect_params[k] for k in ("variant", "direction", "standardize", "seed")
            }
            | {"layers": [[], [3], [-1]]},
            width=False,
        ),
        "decoder_attentions": Sweep(b.decoder_attentions, (model,)),
        "detect": Sweep(b.detect, (E,), bad_params=detect_params, width=False),
        "eager_attention": Sweep(b.eager_attention, (model,)),
        "embedded_victim": Sweep(b.embedded_victim, (b.EmbeddedConfig(**TINY),)),
        "encode_prompts": Sweep(
            b.encode_prompts,
            (processor, rows[:2]),
            bad_params={"device": ["no-such-device"], **TEMPLATE},
        ),
        "encode_with_answers": Sweep(
            b.encode_with_answers,
            (processor, rows[:2]),
            bad_params={"device": ["no-such-device"], "answers": [["a"]], **TEMPLATE},
        ),
        "entropy_matrix": Sweep(
            b.entropy_matrix, (list(attention),), bad_params={"relative": [1]}, width=False
        ),
        "filter_dataset": Sweep(
            b.filter_dataset,
            (rows, [0, 2]),
            bad_params={"removed": [[6], [-1], [0.5]]},
            accepts={
                v.key: "filter_dataset selects rows, whatever they hold"
                for v in input_variants(b.filter_dataset, (rows, [0, 2]), {})
                if v.key.startswith("dataset[")
            },
        ),
        "filter_quality": Sweep(
            b.filter_quality, ([0, 5], poisoned), bad_params={"removed": [[12], [-1]]}
        ),
        "fine_tune": Sweep(
            b.fine_tune,
            (model, processor, rows[:2]),
            {"epochs": 1},
            bad_params={
                "epochs": [0],
                "lr": [0.0],
                "batch_size": [0],
                "seed": [-1],
                "freeze_vision": [1],
                "progress": [1],
                **TEMPLATE,
            },
            accepts={"dataset[0]['image']:width": ANY_SIZE},
        ),
        "fit_layer": Sweep(
            b.fit_layer,
            (E[:, 1],),
            bad_params={k: detect_params[k] for k in ("separation", "seed", "min_weight", "test")},
        ),
        "gaussian_kl": Sweep(
            b.gaussian_kl,
            (0.0, 1.0, 1.0, 2.0),
            bad_params={"std1": [0.0, -1.0], "std2": [0.0]},
            reasons={"mean1": "any real", "mean2": "any real"},
        ),
        "image_token_id": Sweep(b.image_token_id, (model.config,)),
        "image_token_mask": Sweep(
            b.image_token_mask,
            (batch["input_ids"], b.image_token_id(model.config)),
            bad_params={"token_id": [-1]},
            width=False,
        ),
        "last_token_attention": Sweep(
            b.last_token_attention, (model, batch), bad_params={"layers": [[3]]}
        ),
        "last_token_positions": Sweep(
            b.last_token_positions, (batch["attention_mask"],), width=False
        ),
        "model_device": Sweep(b.model_device, (model,)),
        "poison_dataset": Sweep(
            b.poison_dataset,
            (rows, b.PatchTrigger()),
            {"poison_rate": 0.5},
            bad_params={
                "poison_rate": [1.5, -0.1],
                "target_answer": [""],
                "seed": [-1],
                "max_poisoned": [-1],
            },
            accepts={"dataset[0]['image']:width": ANY_SIZE},
        ),
        "profile_layers": Sweep(
            b.profile_layers,
            (E,),
            bad_params={
                k: detect_params[k]
                for k in ("separation", "variant", "seed", "min_weight", "test", "min_gap")
            },
            width=False,
        ),
        "random_drop": Sweep(
            b.random_drop, (10, 3), bad_params={"n": [0], "count": [11, -1], "seed": [-1]}
        ),
        "retrained": Sweep(b.retrained, (run, [0, 1]), bad_params={"removed": [[12], [-1]]}),
        "row_digest": Sweep(b.row_digest, (rows[0],), accepts={"row['image']:width": ANY_SIZE}),
        "suspicion_scores": Sweep(
            b.suspicion_scores,
            (E, [1]),
            bad_params={"variant": ["collapse-ish"], "standardize": ["yes"], "layers": [[], [3]]},
            width=False,
        ),
        "synthetic_vqa": Sweep(
            b.synthetic_vqa,
            (4,),
            bad_params={
                "n": [0],
                "seed": [-1],
                "kinds": [(), ("smell",)],
                "image_size": [2],
                "object_size": [0, 17],
            },
        ),
        "tiny_llava": Sweep(
            b.tiny_llava,
            kwargs={"hidden_size": 16, "num_layers": 1, "num_heads": 1},
            bad_params={
                "seed": [-1],
                "hidden_size": [0],
                "num_layers": [0],
                "num_heads": [0, 3],
                "image_size": [2],
                "vision": ["vit"],
                "padding_side": ["up"],
            },
        ),
        "to_device": Sweep(
            b.to_device,
            (batch, "cpu"),
            bad_params={"device": ["no-such-device"]},
            accepts={
                v.key: "to_device moves tensors, whatever they hold"
                for v in input_variants(b.to_device, (batch, "cpu"), {})
                if v.key.startswith("batch[")
            },
        ),
        "trained_on": Sweep(b.trained_on, (model,)),
        "unseen_rows": Sweep(
            b.unseen_rows,
            (victim.base_model, rows),
            accepts={"dataset[0]['image']:width": ANY_SIZE},
        ),
    }
