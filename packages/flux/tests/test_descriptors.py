"""Stage 2: the data-free projection and the descriptors, against closed forms."""

import numpy as np
import pytest
import torch
from paperplug_flux import (
    client_descriptor,
    data_free_projection,
    descriptor_size,
    wasserstein2_diagonal,
)
from scipy.linalg import sqrtm


def gaussian_w2(m1, c1, m2, c2):
    """The general closed form for Gaussians: ||m1-m2||² + tr(C1 + C2 - 2 (C2^½ C1 C2^½)^½)."""
    r2 = sqrtm(c2)
    cross = np.real(sqrtm(r2 @ c1 @ r2))
    return np.sqrt(np.sum((m1 - m2) ** 2) + np.trace(c1 + c2 - 2 * cross))


def test_marginal_distance_is_the_closed_form_w2_of_diagonal_gaussians():
    rng = np.random.default_rng(0)
    proj = data_free_projection(16, 4)
    za, zb = rng.gamma(2.0, 1.0, (300, 16)), rng.gamma(3.0, 0.5, (200, 16))
    da, db = (client_descriptor(z, None, proj, 3) for z in (za, zb))
    assert da.shape == (descriptor_size(3, 4, labelled=False),) == (8,)
    euclid = np.linalg.norm(da - db)
    ma, sa, mb, sb = da[:4], da[4:], db[:4], db[4:]
    assert euclid == pytest.approx(wasserstein2_diagonal(ma, sa, mb, sb), rel=1e-12)
    assert euclid == pytest.approx(gaussian_w2(ma, np.diag(sa**2), mb, np.diag(sb**2)), rel=1e-9)


def test_descriptor_blocks_are_the_per_label_means_and_stds():
    rng = np.random.default_rng(1)
    proj = data_free_projection(8, 3)
    z = rng.uniform(0, 1, (50, 8))
    y = np.array([0] * 20 + [2] * 30)  # label 1 absent
    d = client_descriptor(torch.tensor(z), torch.tensor(y), proj, n_classes=3)
    p = (z - proj.mean) @ proj.components.T
    assert d.shape == (descriptor_size(3, 3),) == (24,)
    np.testing.assert_allclose(d[:6], np.r_[p.mean(0), p.std(0)])
    np.testing.assert_allclose(d[6:12], np.r_[p[:20].mean(0), p[:20].std(0)])
    np.testing.assert_array_equal(d[12:18], -1.0)  # missing label
    np.testing.assert_allclose(d[18:], np.r_[p[20:].mean(0), p[20:].std(0)])


def test_projection_is_data_free_shared_and_orthonormal():
    a, b = data_free_projection(64, 10), data_free_projection(64, 10)
    np.testing.assert_array_equal(a.components, b.components)  # every client gets the same map
    np.testing.assert_allclose(a.components @ a.components.T, np.eye(10), atol=1e-12)
    assert not np.allclose(data_free_projection(64, 10, seed=2).components, a.components)
    # max_latent only moves the centre: differences of projected points are unchanged
    z = np.random.default_rng(3).uniform(0, 1, (5, 64))
    c = data_free_projection(64, 10, max_latent=2.0)
    np.testing.assert_allclose(np.abs(c.components), np.abs(a.components), atol=1e-9)
    np.testing.assert_allclose(
        np.abs(np.diff(c(z), axis=0)), np.abs(np.diff(a(z), axis=0)), atol=1e-9
    )


def test_laplace_noise_is_seeded_and_centred():
    proj = data_free_projection(8, 2)
    z = np.random.default_rng(0).uniform(0, 1, (40, 8))
    clean = client_descriptor(z, None, proj, 2)
    n1 = client_descriptor(z, None, proj, 2, noise_scale=0.1, rng=np.random.default_rng(5))
    n2 = client_descriptor(z, None, proj, 2, noise_scale=0.1, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(n1, n2)
    assert not np.allclose(n1, clean)
    many = np.stack(
        [
            client_descriptor(z, None, proj, 2, noise_scale=0.1, rng=np.random.default_rng(s))
            for s in range(400)
        ]
    )
    assert np.abs(many.mean(0) - clean).max() < 0.03  # Laplace(0, 0.1): sd of the mean 0.007
    with pytest.raises(ValueError, match="rng"):
        client_descriptor(z, None, proj, 2, noise_scale=0.1)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"latent_dim": 0, "n_components": 1}, "latent_dim"),
        ({"latent_dim": 4, "n_components": 5}, "n_components"),
    ],
)
def test_projection_rejects_bad_sizes(kwargs, match):
    with pytest.raises(ValueError, match=match):
        data_free_projection(**kwargs)


def test_descriptor_rejects_bad_inputs():
    proj = data_free_projection(8, 2)
    with pytest.raises(ValueError, match="shape"):
        client_descriptor(np.zeros((5, 7)), None, proj, 2)
    with pytest.raises(ValueError, match="one label per"):
        client_descriptor(np.zeros((5, 8)), np.zeros(4, dtype=int), proj, 2)
    with pytest.raises(ValueError, match="noise_scale"):
        client_descriptor(np.zeros((5, 8)), None, proj, 2, noise_scale=-1.0)
