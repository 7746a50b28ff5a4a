"""The llm package's public API: one valid call of each callable, for the battery (a scripted
chat model, a tool of two arguments; for the [hf] extra's names, the tiny Llama saved to a
temporary folder, a tiny decoder, a tiny BERT and a tiny GGUF written on the spot, so no call
loads SmolLM2 or reads a cache)."""

from __future__ import annotations

import functools
import tempfile
from pathlib import Path

import numpy as np
import paperplug_llm as m
import torch

from paperplug import seeded_torch
from paperplug.testing import Sweep
from public_api import SCRIPTED

RESULT = "a result type: built by the package, not called with user input"
ERROR = "an exception class: raised by the package with its own message"
REASONS = {
    "AgentResult": RESULT,
    "ToolRun": RESULT,
    "Completion": RESULT,
    "ToolCall": RESULT,
    "LLMError": ERROR,
    "LLMHTTPError": ERROR,
    "LLMResponseError": ERROR,
    "LLMTimeoutError": ERROR,
    "ToolArgumentError": ERROR,
    "ChatServer": "binds a socket and serves (test_wire.py checks it over HTTP)",
}
URL = "http://127.0.0.1:9"  # never contacted: constructing a client does not connect
MESSAGES = [{"role": "user", "content": "add 2 and 3"}]
CALL = '<tool_call>{"name": "add", "arguments": {"a": 2, "b": 3}}</tool_call>'


def add(a: int, b: int) -> int:
    """Add two numbers.

    a: the first
    b: the second
    """
    return a + b


TMP = Path(tempfile.mkdtemp(prefix="paperplug-llm-sweep-"))
MISSING = str(TMP / "missing")  # a path that does not exist
A_FILE = TMP / "a-file.txt"  # a path that is a file, not a folder
A_FILE.write_text("not a model")
WORDS = ["the", "tool", "pays", "bill", "send", "mail", "to", "a", "user", "now"]
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def vocab_of(chat: m.HFChatModel) -> int:
    """The number of token ids the chat model's embedding has."""
    return chat.model.get_input_embeddings().num_embeddings


@functools.cache
def local_server() -> m.ChatServer:
    """A ChatServer on 127.0.0.1 over a scripted model (a daemon thread, as the package's
    tests serve one), for the OpenAI client's valid calls."""
    return m.ChatServer(m.ScriptedChatModel(lambda messages, **kw: "hi there")).start()


@functools.cache
def tiny_llama() -> Path:
    """The tiny Llama chat model and its tokenizer, saved for `from_pretrained`."""
    m.build_tiny_model(TMP / "tiny-llama", hidden_size=8, layers=1)
    return TMP / "tiny-llama"


@functools.cache
def tiny_bert() -> Path:
    """A one-layer BERT of hidden size 8 over ten words, saved for `from_pretrained`."""
    from transformers import BertConfig, BertModel, BertTokenizerFast

    path = TMP / "tiny-bert"
    path.mkdir()
    (path / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", *WORDS]))
    BertTokenizerFast(vocab_file=str(path / "vocab.txt")).save_pretrained(path)
    config = BertConfig(
        vocab_size=len(WORDS) + 4, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
        intermediate_size=16, max_position_embeddings=32,
    )  # fmt: skip
    with seeded_torch(0):
        BertModel(config).save_pretrained(path)
    return path


@functools.cache
def tiny_gguf() -> Path:
    """A one-layer float32 Llama of hidden size 8 in a GGUF file with a byte-level tokenizer
    and a ChatML template: what load_smollm2 de-quantizes, at a thousandth of SmolLM2's size."""
    import gguf
    from tokenizers import pre_tokenizers

    path = TMP / "tiny.gguf"
    vocab, hidden, ffn, heads = 264, 8, 16, 2
    tokens = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tokens += [*sorted(pre_tokenizers.ByteLevel.alphabet()), "ab"]
    tokens += [f"<extra{i}>" for i in range(vocab - len(tokens))]
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_context_length(64)
    writer.add_embedding_length(hidden)
    writer.add_block_count(1)
    writer.add_feed_forward_length(ffn)
    writer.add_head_count(heads)
    writer.add_head_count_kv(1)
    writer.add_rope_dimension_count(hidden // heads)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_vocab_size(vocab)
    writer.add_tokenizer_model("gpt2")
    writer.add_token_list(tokens)
    writer.add_token_types([3, 3, 3] + [1] * (vocab - 3))
    writer.add_token_merges(["a b"])
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_chat_template(CHATML)
    rng = np.random.default_rng(0)
    shapes = {
        "token_embd.weight": (vocab, hidden), "output_norm.weight": (hidden,),
        "output.weight": (vocab, hidden), "blk.0.attn_norm.weight": (hidden,),
        "blk.0.attn_q.weight": (hidden, hidden), "blk.0.attn_k.weight": (hidden // heads, hidden),
        "blk.0.attn_v.weight": (hidden // heads, hidden),
        "blk.0.attn_output.weight": (hidden, hidden), "blk.0.ffn_norm.weight": (hidden,),
        "blk.0.ffn_gate.weight": (ffn, hidden), "blk.0.ffn_up.weight": (ffn, hidden),
        "blk.0.ffn_down.weight": (hidden, ffn),
    }  # fmt: skip
    for name, shape in shapes.items():
        writer.add_tensor(name, rng.normal(size=shape).astype(np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def hf_sweeps() -> dict[str, Sweep]:
    """The [hf] extra's callables, on the tiny models."""
    decoder = m.build_tiny_decoder(
        16, family="llama", hidden_size=8, num_layers=1, num_heads=2, causal_lm=True
    )
    vocab = decoder.get_input_embeddings().num_embeddings
    ids = torch.tensor([[1, 2, 3, 4]])
    _, cache = m.forward_with_cache(decoder, ids)
    logits = torch.randn(10, generator=torch.Generator().manual_seed(0))
    encoder = m.MeanPoolEncoder(tiny_bert(), max_length=16, batch_size=2)
    chat = m.HFChatModel(tiny_llama(), max_tokens=2)
    path = {"path": [MISSING, str(A_FILE)]}
    ids_bad = [[], [1.5], [-1], [vocab], "ab"]
    hi = [{"role": "user", "content": "hi"}]
    bad_messages = [[], [{"content": "hi"}], [3]]
    add_spec = [m.tool(add).spec()]
    return {
        "HFChatModel.chat": Sweep(
            chat.chat,
            (hi,),
            {"max_tokens": 2, "seed": 0},
            bad_params={"messages": bad_messages, "max_tokens": [0], "seed": [-1]},
        ),
        "HFChatModel.stream": Sweep(
            chat.stream,
            (hi,),
            {"tools": add_spec},
            bad_params={"messages": bad_messages, "tools": ["add", [3]]},
        ),
        "HFChatModel.prompt_ids": Sweep(
            chat.prompt_ids,
            (hi,),
            {"tools": add_spec},
            bad_params={"messages": bad_messages, "tools": ["add", [3]]},
        ),
        "HFChatModel.encode": Sweep(chat.encode, ("hi there",), reasons={"text": "any text"}),
        "HFChatModel.pick_tool": Sweep(
            chat.pick_tool,
            (hi, add_spec),
            bad_params={"messages": bad_messages, "tools": [[], "add", [3]]},
        ),
        "HFChatModel.token_logprobs": Sweep(
            chat.token_logprobs,
            (hi, "ok"),
            bad_params={
                "messages": bad_messages,
                "continuation": ["", [], [-1], [vocab_of(chat)], [1.5]],
            },
        ),
        "HFChatModel": Sweep(
            m.HFChatModel,
            (tiny_llama(),),
            {"max_tokens": 2},
            bad_params={
                "model": ["", MISSING, str(A_FILE)],
                "chat_template": [""],
                "dtype": ["float13", torch.int64],
                "device": ["nowhere"],
                "max_tokens": [0],
                "name": [""],
            },
            reasons={
                "tokenizer": "None (loaded with the model) or its tokenizer: a wrong type is tried"
            },
        ),
        "HFChatModel.complete": Sweep(
            chat.complete,
            ([{"role": "user", "content": "hi"}],),
            {
                "max_tokens": 2,
                "temperature": 1.0,
                "top_p": 0.9,
                "top_k": 5,
                "seed": 0,
                "stop": ["x"],
            },
            bad_params={
                "max_tokens": [0],
                "temperature": [-1.0],
                "top_p": [0.0, 1.5],
                "top_k": [-1],
                "seed": [-1],
                "stop": [[3], 3, [""]],
            },
        ),
        "HFChatModel.continuation_logprobs": Sweep(
            chat.continuation_logprobs,
            ([{"role": "user", "content": "hi"}], ["a", "bc"]),
            bad_params={"candidates": ["ab", [3], [""]], "prefix": [3], "tools": ["add", [3]]},
        ),
        "build_tiny_decoder": Sweep(
            m.build_tiny_decoder,
            (16,),
            {"family": "llama", "hidden_size": 8, "num_layers": 1, "num_heads": 2},
            bad_params={
                "vocab_size": [1, 0],
                "family": ["bert"],
                "hidden_size": [0, 7],
                "num_layers": [0],
                "num_heads": [0, 3],
                "max_positions": [0],
                "seed": [-1],
            },
        ),
        "build_tiny_model": Sweep(
            m.build_tiny_model,
            kwargs={"hidden_size": 8, "layers": 1},
            bad_params={"path": [str(A_FILE)], "seed": [-1], "hidden_size": [0, 6], "layers": [0]},
        ),
        "cache_keyword": Sweep(m.cache_keyword, (decoder,)),
        "continuation_logprobs": Sweep(
            m.continuation_logprobs,
            (decoder, [1, 2], [[3, 4], [5]]),
            bad_params={
                "prompt_ids": ids_bad,
                "candidates": ["ab", [[]], *([c] for c in ids_bad[1:])],
                "batch_size": [0],
            },
        ),
        "crop_cache": Sweep(m.crop_cache, (cache, 2), bad_params={"length": [-1, 5]}),
        "forward_with_cache": Sweep(
            m.forward_with_cache,
            (decoder, ids),
            bad_params={
                "input_ids": [torch.tensor([[1, vocab]]), torch.tensor([[-1]]), ids[0]],
            },
            reasons={"cache": "None or the KV cache of an earlier call (a wrong type is tried)"},
            width=False,  # a sequence of any length
        ),
        "load_smollm2": Sweep(
            m.load_smollm2,
            kwargs={"gguf_path": tiny_gguf(), "cache": TMP / "cache", "max_tokens": 2},
            bad_params={
                "gguf_path": [MISSING, str(TMP)],
                "cache": [str(A_FILE)],
                "max_tokens": [0],
            },
        ),
        "sample_next": Sweep(
            m.sample_next,
            (logits,),
            {"temperature": 1.0, "generator": torch.Generator().manual_seed(0)},
            bad_params={"temperature": [-1.0], "top_p": [0.0, 1.5], "top_k": [-1]},
        ),
        "MeanPoolEncoder": Sweep(
            m.MeanPoolEncoder,
            (tiny_bert(),),
            {"max_length": 16, "batch_size": 2},
            bad_params={**path, "max_length": [0], "batch_size": [0]},
        ),
        "MeanPoolEncoder.encode": Sweep(
            encoder.encode, (["the tool pays", "send mail"],), bad_params={"texts": ["the", [3]]}
        ),
    }


def sweeps() -> dict[str, Sweep]:
    scripted = m.ScriptedChatModel([CALL, "5"])
    tools = m.as_tools([add])
    specs = [t.spec() for t in tools.values()]
    served = m.OpenAIChatModel("echo", local_server().url)
    return {
        "check_messages": Sweep(m.check_messages, (MESSAGES,)),
        "parse_tool_calls": Sweep(
            m.parse_tool_calls, (CALL,), reasons={"text": "any string is a reply to read"}
        ),
        "tool_system_prompt": Sweep(m.tool_system_prompt, (specs,)),
        "Tool": Sweep(
            m.Tool,
            (add,),
            bad_params={"name": ["a b", ""], "description": [3], "parameters": [{"type": 3}]},
        ),
        "tool": Sweep(m.tool, (add,)),
        "as_tools": Sweep(m.as_tools, ([add],)),
        "ScriptedChatModel": Sweep(
            m.ScriptedChatModel, (["hi"],), bad_params={"replies": ["hi", [3]]}
        ),
        "propose": Sweep(
            m.propose,
            (m.ScriptedChatModel([CALL]), MESSAGES, specs),
            mutates={"model": SCRIPTED},
        ),
        "execute_call": Sweep(
            m.execute_call,
            (m.ToolCall(name="add", arguments={"a": 2, "b": 3}), tools),
            bad_params={"guard": ["strict"]},
        ),
        "run_agent": Sweep(
            m.run_agent,
            (m.ScriptedChatModel([CALL, "5"]), MESSAGES, [add]),
            bad_params={"max_steps": [0], "first_tool_choice": ["sometimes"], "guard": ["strict"]},
            mutates={"model": SCRIPTED},
        ),
        "get_chat_model": Sweep(
            m.get_chat_model,
            (f"openai:tiny@{URL}",),
            bad_params={"spec": ["nope", "hf:", "openai:"]},
        ),
        "OpenAIChatModel": Sweep(
            m.OpenAIChatModel,
            ("tiny", URL),
            bad_params={
                "model": [""],
                "base_url": ["ftp://127.0.0.1"],
                "api_key": [3],
                "timeout": [0.0],
                "max_retries": [-1],
                "backoff": [-1.0],
                "max_backoff": [-1.0],
            },
        ),
        "ScriptedChatModel.chat": Sweep(scripted.chat, (MESSAGES,)),
        "OpenAIChatModel.chat": Sweep(
            served.chat, (MESSAGES,), bad_params={"messages": [[], [{"content": "hi"}], [3]]}
        ),
        "OpenAIChatModel.stream": Sweep(
            served.stream, (MESSAGES,), bad_params={"messages": [[], [{"content": "hi"}], [3]]}
        ),
        "OpenAIChatModel.complete": Sweep(
            served.complete,
            (MESSAGES,),
            {"stream": True},
            bad_params={"messages": [[], [{"content": "hi"}], [3]], "stream": ["yes"]},
        ),
        "ScriptedChatModel.complete": Sweep(
            m.ScriptedChatModel(lambda messages, **kw: "hi").complete,
            (MESSAGES,),
            bad_params={"messages": [[], [{"content": "hi"}], [3]]},
        ),
        "ScriptedChatModel.stream": Sweep(
            m.ScriptedChatModel(lambda messages, **kw: "hi there").stream,
            (MESSAGES,),
            bad_params={"messages": [[], [{"content": "hi"}], [3]]},
        ),
        "Tool.validate": Sweep(
            m.tool(add).validate,
            ({"a": 2, "b": 3},),
            bad_params={"arguments": [{"a": "x", "b": 3}, {"a": 2}, {"a": 2, "b": 3, "c": 1}]},
        ),
        **hf_sweeps(),
    }
