"""Registrations only: factories are lazy "module:attr" paths, so listing imports nothing heavy."""

from paperplug import hookimpl

PAPER = "EAReranker: Efficient Embedding Adequacy Assessment for Retrieval Augmented Generation (NeurIPS 2025)"


@hookimpl
def register_trainers(register):
    register(
        "eareranker",
        "paperplug_eareranker.training:EAReranker",
        summary="document adequacy for RAG from query and document embeddings alone (no text); rerank",
        paper=PAPER,
        tags=("reranking", "rag", "embeddings", "transformer"),
    )
