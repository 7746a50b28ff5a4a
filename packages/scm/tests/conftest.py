"""One thread (shared CPUs) and no progress bars in tests; one small trained SCM the tests
share, and tokenizers of the common families trained offline in a fraction of a second."""

import os

import pytest

os.environ.setdefault("PAPERPLUG_PROGRESS", "0")

SMALL = {"hidden_size": 64, "num_layers": 1}  # the tiny Qwen2, smaller still for tests


@pytest.fixture(autouse=True, scope="session")
def _one_thread():
    from paperplug.harness import single_thread

    single_thread()


@pytest.fixture(scope="session")
def splits():
    """A seeded FineHarm-like set: 300 train, 100 validation, 200 test responses."""
    from paperplug_scm import load_data

    return load_data(0, n_train=300, n_val=100, n_test=200)


@pytest.fixture(scope="session")
def trained(splits):
    """SCM on a small tiny Qwen2 with the embedded settings (a couple of seconds)."""
    from paperplug_scm import EMBEDDED_TRAINING, SCMTrainer

    train, val, _ = splits
    return SCMTrainer(progress=False, tiny=SMALL, seed=0, **EMBEDDED_TRAINING).fit(train, val)


@pytest.fixture(scope="session")
def checkpoint(trained, tmp_path_factory):
    return trained.save(tmp_path_factory.mktemp("scm") / "ckpt")


# Llama 3's pre-tokenisation: punctuation swallows the line breaks after it (".\n\n" is one
# piece), so a token runs across a word boundary and the monitor must roll back over it.
LLAMA3_SPLIT = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
    r"|\s*[\r\n]+|\s+(?!\S)|\s+"
)


@pytest.fixture(scope="session")
def tokenizer_of():
    """`tokenizer_of(family)`: a trained tokenizer of that family (built once per session)."""
    built = {}

    def get(family):
        if family not in built:
            built[family] = train_tokenizer(family)
        return built[family]

    return get


def train_tokenizer(family: str):
    """A fast tokenizer of `family` trained on generated text (offline, well under a second):
    "bytelevel" (GPT-2 / Qwen2), "llama3", "wordpiece" (BERT), "metaspace" (SentencePiece
    unigram), "prefix_space" (byte-level with add_prefix_space, as RoBERTa)."""
    from paperplug_scm import make_fineharm_like, response_text
    from paperplug_scm.retokenisation import PROBE
    from tokenizers import Regex, Tokenizer, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    texts = [response_text(ex) for ex in make_fineharm_like(200, seed=9)]
    corpus = texts + [t.replace(". ", ".\n\n") for t in texts[:100]] + [PROBE] * 3  # paragraphs
    alphabet = pre_tokenizers.ByteLevel.alphabet()
    bpe = trainers.BpeTrainer(vocab_size=1500, special_tokens=["<pad>"], initial_alphabet=alphabet)
    if family in ("bytelevel", "prefix_space"):
        core, trainer = Tokenizer(models.BPE()), bpe
        core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=family == "prefix_space")
    elif family == "llama3":
        core, trainer = Tokenizer(models.BPE()), bpe
        core.pre_tokenizer = pre_tokenizers.Sequence(
            [
                pre_tokenizers.Split(Regex(LLAMA3_SPLIT), behavior="isolated"),
                pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
            ]
        )
    elif family == "wordpiece":
        core = Tokenizer(models.WordPiece(unk_token="<unk>"))
        core.normalizer, core.pre_tokenizer = (
            normalizers.BertNormalizer(),
            pre_tokenizers.BertPreTokenizer(),
        )
        trainer = trainers.WordPieceTrainer(vocab_size=600, special_tokens=["<pad>", "<unk>"])
    elif family == "metaspace":
        core = Tokenizer(models.Unigram())
        core.pre_tokenizer = pre_tokenizers.Metaspace()
        trainer = trainers.UnigramTrainer(
            vocab_size=400, special_tokens=["<pad>", "<unk>"], unk_token="<unk>"
        )
    else:
        raise ValueError(family)
    core.train_from_iterator(corpus, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>")
