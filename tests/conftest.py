"""Shared fixtures: a tiny byte-level BPE tokenizer and a tiny random Llama, built in code (offline, seconds).

The model is saved with ``save_pretrained`` and loaded back through :func:`faithwatch.models.loading.load_model`,
so the real loading path (registration of the ``faithwatch_sdpa`` attention) is exercised.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

# never reach the Hugging Face hub from the tests (set before transformers / huggingface_hub are imported)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

SPECIAL_TOKENS = ["<pad>", "<|im_start|>", "<|im_end|>"]
CHATML_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

CORPUS = """
The Eiffel Tower is a wrought iron lattice tower on the Champ de Mars in Paris, France.
It is named after the engineer Gustave Eiffel, whose company designed and built the tower.
The tower was constructed from 1887 to 1889 as the centerpiece of the 1889 World's Fair.
The tower is 330 metres tall, about the same height as an 81 storey building.
Dr. Smith paid 3.5 dollars for a ticket to the top. Mr. Jones paid 4.25 dollars.
The capital of France is Paris. The river Seine flows through the city.
Answer the question using only the information in the context.
Context: Question: Answer: What is the capital of France? Who built the tower? When was it built?
The quick brown fox jumps over the lazy dog. The dog sleeps in the warm sun all day.
The museum opens at nine in the morning and closes at six in the evening every day.
The company reported revenue of 4.2 billion dollars in 2023, up 12 percent from the previous year.
The river, the bridge and the old station are near the market square of the town.
Scientists measured the temperature of the water and found it was colder than expected.
The train leaves the station at noon and arrives in the city three hours later.
Students read books in the library, and the teacher writes notes on the board.
"""


def _train_tokenizer(vocab_size: int = 640):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    lines = [line.strip() for line in CORPUS.strip().splitlines()]
    tok.train_from_iterator(lines * 4, trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<pad>")


@pytest.fixture(scope="session")
def tokenizer_plain():
    """The tiny tokenizer without a chat template (prompts use the plain 'Question/Answer' layout)."""
    tok = _train_tokenizer()
    tok.chat_template = None
    return tok


@pytest.fixture(scope="session")
def tokenizer(tokenizer_plain):
    """The tiny tokenizer with a ChatML chat template."""
    import copy

    tok = copy.deepcopy(tokenizer_plain)
    tok.chat_template = CHATML_TEMPLATE
    return tok


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory, tokenizer):
    """A seeded random LlamaForCausalLM (GQA: 4 heads, 2 kv heads) saved with the tokenizer."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(1234)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=3,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
        tie_word_embeddings=False,
    )
    model = LlamaForCausalLM(config)
    with torch.no_grad():  # larger logits than the default init, so distributions are far from uniform
        model.lm_head.weight.mul_(20.0)
    path = tmp_path_factory.mktemp("tiny-llama")
    model.save_pretrained(path)
    tokenizer.save_pretrained(path)
    return path


@pytest.fixture(scope="session")
def lm(tiny_model_dir):
    """The tiny model loaded through faithwatch's real loading path.

    Runs single-threaded: the model is tiny, and with other processes on the cores OpenMP's spinning
    threads slow each forward pass down by orders of magnitude.
    """
    from faithwatch.models.loading import load_model

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield load_model(str(tiny_model_dir), device="cpu")
    torch.set_num_threads(threads)


@pytest.fixture
def one_thread():
    """Run a test single-threaded (see ``lm``), restoring torch's thread count afterwards."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def lm_plain(lm, tokenizer_plain):
    """The same model with the template-less tokenizer."""
    from faithwatch.models.loading import LoadedModel

    return LoadedModel(model=lm.model, tokenizer=tokenizer_plain, model_id=lm.model_id + "#plain")


@pytest.fixture(scope="session")
def monitor(lm):
    """A Monitor over the tiny model with every default signal and lexical alignment (no embedding scorer; the
    default LSS tagger signal needs the MiniLM package)."""
    from faithwatch.monitor import Monitor

    return Monitor(lm, alignment="lexical", max_new_tokens=40)


@pytest.fixture(scope="session")
def embedded_monitor():
    """The default Monitor: the embedded SmolLM2-135M-Instruct, shipped detector and alignment (slow tests)."""
    from faithwatch.monitor import Monitor

    threads = torch.get_num_threads()
    torch.set_num_threads(min(2, threads))
    yield Monitor()
    torch.set_num_threads(threads)


def single_token_id(tokenizer, text: str) -> int:
    ids = tokenizer(text, add_special_tokens=False)["input_ids"]
    assert len(ids) == 1, f"{text!r} is not a single token of the test tokenizer: {ids}"
    return ids[0]


class SentenceChooser:
    """Forces sentence structure on a random model, one token at a time.

    Greedy among space-prefixed lowercase words of 3+ letters (no abbreviations, no stray bytes, never eos),
    except that every 7th step is "." and the step after it " The". Counts its calls and the ids it chose.
    """

    def __init__(self, tokenizer, period: int = 7) -> None:
        self.period = period
        self.dot = single_token_id(tokenizer, ".")
        self.the = single_token_id(tokenizer, " The")
        words = [
            i for i in range(len(tokenizer))
            if re.fullmatch(r" [a-z]{3,}", tokenizer.decode([i]))
        ]
        assert len(words) > 20, "the test tokenizer has too few word tokens"
        self.words = torch.tensor(words)
        self.calls = 0
        self.chosen: list[int] = []

    def __call__(self, logprobs: torch.Tensor) -> int:
        step = self.calls
        self.calls += 1
        if step % self.period == self.period - 1:
            token = self.dot
        elif step > 0 and step % self.period == 0:
            token = self.the
        else:
            token = int(self.words[int(torch.argmax(logprobs[self.words]))])
        self.chosen.append(token)
        return token


@pytest.fixture
def make_chooser(tokenizer) -> Callable[[], SentenceChooser]:
    """A factory of fresh sentence-forcing choosers (each has its own step counter)."""
    return lambda period=7: SentenceChooser(tokenizer, period)


@pytest.fixture(scope="session")
def full_monitor(lm):
    """A Monitor over the tiny model with every white-box signal (LID against a random bank, hidden states, lookback)
    and lexical alignment: for checks that a path computes every feature as ``Monitor.score`` / ``generate`` do."""
    import numpy as np

    from faithwatch.monitor import Monitor
    from faithwatch.signals import LIDBank

    rng = np.random.default_rng(0)
    hidden = lm.model.config.hidden_size
    bank = LIDBank(model_id=lm.model_id, layers={layer: rng.standard_normal((200, hidden)) for layer in (1, 2)})
    return Monitor(lm, alignment="lexical", lid_bank=bank, lid_layers=(1, 2), hidden_layers=(2,),
                   signals=["likelihood", "entropy", "lid", "contrastive", "influence", "lookback", "alignment",
                            "lexical", "edits", "hidden"], detector="heuristic")
