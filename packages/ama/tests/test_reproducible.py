"""Same seed, same run in a new process: nothing the attack does may depend on the string hash
seed (a set of strings iterated into a random choice would)."""

import json
import os
import subprocess
import sys

RUN = """
import json
from paperplug_ama import AMAttack, BM25ToolRetriever, load_scenarios
result = AMAttack(seed=0, trials=10).run(BM25ToolRetriever(), load_scenarios(["travel"]), budget=600)
print(json.dumps(result.to_dict(), sort_keys=True))
"""


def _run(hash_seed: str) -> dict:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run(
        [sys.executable, "-c", RUN], env=env, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def test_same_seed_same_run_under_different_hash_seeds():
    """Before the fix (topic credit gathered through a set) this run's history differed
    between hash seeds 1 and 2; every scored candidate must now agree."""
    first, second = _run("1"), _run("2")
    assert first["meta"]["groups"][0]["history"] == second["meta"]["groups"][0]["history"]
    assert first == second
