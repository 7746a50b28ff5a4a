import pytest
import torch

torch.set_num_threads(1)


@pytest.fixture(scope="session")
def minilm():
    from paperplug_ama import EmbeddingToolRetriever

    return EmbeddingToolRetriever()
