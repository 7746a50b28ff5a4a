"""The paper's figures: the image-patch × text-token interaction heat map, and the top-k
cross-modal pairs drawn on the image."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperplug.checks import check_array, check_scalar, check_type
from paperplug.harness import pyplot
from paperplug_fixlip.interactions import Interactions


def _check_plot(interactions: Any, ax: Any) -> None:
    check_type(interactions, "interactions", Interactions)
    if interactions.n_a is None:
        raise ValueError("interactions must have two modalities (n_a): an image x text map")
    if ax is not None and not callable(getattr(ax, "imshow", None)):
        raise TypeError(f"ax must be a matplotlib Axes (or None), got {type(ax).__name__}")


def plot_interaction_heatmap(interactions: Interactions, ax: Any = None, *, title: str = "") -> Any:
    """Heat map of φ_ij, first-modality players (rows) × second-modality players (columns),
    diverging colours centred on 0. Returns the figure."""
    _check_plot(interactions, ax)
    check_type(title, "title", str)
    plt = pyplot()
    matrix = interactions.cross_matrix
    if ax is None:
        _, ax = plt.subplots(figsize=(1 + 0.45 * matrix.shape[1], 1 + 0.35 * matrix.shape[0]))
    bound = float(np.abs(matrix).max()) or 1.0
    im = ax.imshow(matrix, cmap="RdBu_r", vmin=-bound, vmax=bound, aspect="auto")
    names = interactions.names or [str(i) for i in range(interactions.n_players)]
    ax.set_yticks(range(matrix.shape[0]), names[: interactions.n_a], fontsize=7)
    ax.set_xticks(range(matrix.shape[1]), names[interactions.n_a :], rotation=60, fontsize=7)
    ax.set_title(title or f"{interactions.index} (p = {interactions.p}) second order")
    ax.figure.colorbar(im, ax=ax, shrink=0.8)
    return ax.figure


def plot_top_pairs(
    interactions: Interactions, image: np.ndarray, grid: tuple[int, int], k: int = 4, ax: Any = None
) -> Any:
    """The image with the patches of the top-k positive image × text pairs outlined and
    labelled with their token (patches row-major on a `grid` of (rows, cols))."""
    _check_plot(interactions, ax)
    image = check_array(image, "image", ndim=(2, 3))
    if not isinstance(grid, (tuple, list)) or len(grid) != 2:
        raise TypeError(f"grid must be a pair (rows, cols), got {grid!r}")
    rows, cols = (check_scalar(g, "grid", "int", low=1) for g in grid)
    if rows * cols != interactions.n_a:
        raise ValueError(f"grid must hold the {interactions.n_a} patches, got {rows} x {cols}")
    check_scalar(k, "k", "int", low=1)
    plt = pyplot()
    if ax is None:
        _, ax = plt.subplots(figsize=(4, 4))
    ax.imshow(image, cmap="gray" if image.ndim == 2 else None)
    h, w = image.shape[0] / rows, image.shape[1] / cols
    names = interactions.names or [str(i) for i in range(interactions.n_players)]
    colours = plt.cm.tab10.colors
    for rank, (i, j, value) in enumerate(interactions.top_pairs(k)):
        r, c = divmod(i, cols)
        ax.add_patch(
            plt.Rectangle(
                (c * w - 0.5, r * h - 0.5), w, h, fill=False, lw=2, color=colours[rank % 10]
            )
        )
        ax.text(
            c * w,
            r * h + 1.5 + 2 * (rank % 2),
            f"{names[j]} {value:+.2f}",
            fontsize=7,
            color=colours[rank % 10],
            backgroundcolor="white",
        )
    ax.set_axis_off()
    ax.set_title(f"top {k} image x text interactions")
    return ax.figure
