"""The base install has no torch: the wire plumbing works without it, and a local model names
the [hf] extra. Run in a fresh interpreter where torch and transformers cannot be imported."""

import subprocess
import sys

BLOCK = "import sys; sys.modules['torch'] = None; sys.modules['transformers'] = None\n"


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCK + code], capture_output=True, text=True)


def test_the_wire_plumbing_works_without_torch():
    code = (
        "from paperplug_llm import *\n"
        "with ChatServer(ScriptedChatModel(['hi']), model_name='m') as server:\n"
        "    model = OpenAIChatModel('m', server.url, api_key='none')\n"
        "    print(model.chat([{'role': 'user', 'content': 'x'}]))\n"
        "print(sorted(m for m in ('torch', 'transformers') if sys.modules.get(m)))\n"
    )
    run = _run(code)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["hi", "[]"]


def test_a_local_model_without_the_extra_names_it():
    run = _run("from paperplug_llm import HFChatModel\n")
    assert run.returncode == 1
    assert "MissingExtraError" in run.stderr
    assert "pip install 'paperplug-llm[hf]'" in run.stderr
    run = _run("from paperplug_llm import build_tiny_model; build_tiny_model()\n")
    assert "pip install 'paperplug-llm[hf]'" in run.stderr
