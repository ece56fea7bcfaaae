"""Red team 2, root causes 3 and 6: inputs at one scale and sign pattern, hard slices on the last dim
only, an absolute atol, and scalar constructor arguments never varied.

The verifier now draws one trial at ~1e-3 and one spread up to ~1e5 (cases.SCALES), judges the
absolute part of the tolerance in units of the reference output's own RMS (compare.magnitude), puts
calm and constant slices along every dim of the wide trial, signs positive weights where the
reference stays finite, and moves literal float constructor arguments at unseen shapes. The attacks
themselves run through the CLI in test_redteam2.py; these are the mechanisms, fast.
"""

from __future__ import annotations

import torch

from xe_forge.problem.cases import calm_indices, spread, wide
from xe_forge.verify.compare import compare, fingerprint, fingerprint_matches
from xe_forge.verify.draws import attempts, signed_state
from xe_forge.verify.weights import perturbed, positive, varied_floats


def _gen(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


def test_tiny_outputs_flushed_to_zero_fail_though_each_is_below_atol():
    x = wide((10, 200), _gen(), 100.0)
    want = torch.softmax(x, dim=-1)
    flushed = torch.where(want < 9e-5, torch.zeros_like(want), want)
    assert int((want != flushed).sum()) > 0 and float((want - flushed).abs().max()) < 1e-4
    assert not compare("out", flushed, want, 1e-4, 1e-4, torch.float32).passed
    honest = want * (1 + 1e-6 * torch.randn(want.shape, generator=_gen(1)))
    assert compare("out", honest, want, 1e-4, 1e-4, torch.float32).passed


def test_an_output_at_1e_3_is_not_within_atol_of_a_wrong_one():
    want = 1e-3 * torch.randn(100, 100, generator=_gen())
    got = want.clone()
    got[7, 7] += 5e-5  # one element 5% off: below atol, and too little for the relative L2 bound
    assert not compare("out", got, want, 1e-4, 1e-4, torch.float32).passed


def test_a_large_output_allows_rounding_at_its_own_size_and_fingerprints_agree():
    want = 1e4 * torch.randn(13, 80, generator=_gen())
    got = want + 1e-3 * torch.randn(want.shape, generator=_gen(2))  # fp32 sums at 1e4: absolute error ~1e-3
    assert compare("out", got, want, 1e-4, 1e-4, torch.float32).passed
    assert fingerprint_matches(fingerprint([got]).tolist(), [want], 1e-4, 1e-4)
    clamped = want.clamp(-2e4, 2e4)
    assert not torch.equal(clamped, want) and not compare("out", clamped, want, 1e-4, 1e-4, torch.float32).passed


def test_scale_trials_reach_1e_3_and_past_an_int16_cast():
    small, large = spread((64, 64), _gen(), -3.5, -2.5), spread((64, 64), _gen(), 2.0, 5.0)
    assert 1e-4 < float(small.std()) < 1e-2 and float(small.mean().abs()) < 1e-3
    assert float((large.abs() > 32768 / 4).float().mean()) > 0.1 and float((large < 0).float().mean()) > 0.3


def test_hard_slices_lie_along_every_dim_calm_columns_for_a_batchnorm():
    x = wide((16, 24), _gen(), 100.0, hard=True)
    cols_std = x.std(dim=0)
    calm = (cols_std < 2.0) & ((x.mean(dim=0) - 100).abs() < 2.0)
    assert int(calm.sum()) >= 5, "every fourth column is the offset plus a standard normal"
    assert bool((x[:, -1] == 100.0).all()) and bool((x[-1] == 100.0).all()), "a constant slice along each dim"
    rows_std = x.std(dim=1)
    assert len(calm_indices(16, "cpu")) >= 4
    assert bool((rows_std[calm_indices(16, "cpu")] < 2.0).all()), "the calm rows stay calm where columns cross them"
    y = wide((2, 8, 5, 5), _gen(), 30.0, hard=True)
    assert float(y[:, 1].std()) < 2.0, "a calm channel (a BatchNorm2d's reduction)"


def test_positive_weights_are_signed_where_asked_with_the_same_magnitudes():
    state = {"gamma": torch.ones(32), "var": torch.rand(32) + 0.5, "w": torch.randn(8, 4), "scale": torch.ones(1)}
    assert positive(state) == ["gamma", "var", "scale"]
    plain, signed = perturbed(state, 7), perturbed(state, 7, {"gamma", "scale"})
    assert bool((plain["gamma"] > 0).all()) and bool((signed["gamma"] < 0).any()) and bool((signed["gamma"] > 0).any())
    assert torch.equal(signed["gamma"].abs(), plain["gamma"]) and torch.equal(signed["var"], plain["var"])
    assert float(signed["scale"]) < 0 and torch.equal(signed["w"], plain["w"])


def test_literal_float_constructor_arguments_move_ints_and_bools_do_not():
    init = [72, 80, 0.1, -1.0, 1.0, True, 0, 0.0]
    varied = varied_floats(init, 5)
    assert varied[:2] == [72, 80] and varied[5:] == [True, 0, 0.0]
    assert varied[2] > 0.1 and varied[3] < -1.0 < 1.0 < varied[4]
    assert varied_floats(init, 5) == varied


def test_signed_weights_fall_back_to_parameters_then_to_positive_where_the_reference_refuses():
    state = {"bn.weight": torch.ones(8), "bn.running_var": torch.ones(8), "w": torch.randn(8)}
    every = signed_state(state, 3, {"bn.weight", "w"}, lambda moved: True)
    assert bool((every["bn.running_var"] < 0).any()) and bool((every["bn.weight"] < 0).any())
    no_negative_var = signed_state(state, 3, {"bn.weight", "w"}, lambda m: bool((m["bn.running_var"] > 0).all()))
    assert bool((no_negative_var["bn.running_var"] > 0).all()) and bool((no_negative_var["bn.weight"] < 0).any())
    refused = signed_state(state, 3, {"bn.weight", "w"}, lambda moved: False)
    assert all(bool((refused[k] > 0).all()) for k in ("bn.weight", "bn.running_var"))


def test_scaled_trials_step_down_to_unit_scale_and_the_problems_own_inputs():
    assert attempts("signed", "large") == [("signed", 0.0, (2.0, 5.0), 0.0), ("signed", 0.0, (1.0, 3.0), 0.0),
                                           ("signed", 100.0, None, 0.0), ("problem", 0.0, None, 0.0)]
    with_zeros = attempts("problem", "unit", zeros=0.3)
    assert with_zeros[0] == ("problem", 100.0, None, 0.3) and all(z == 0.0 for *_, z in with_zeros[1:]), \
        "exact zeros first, the plain draw where the reference refuses them"
    assert attempts("signed", "unit")[0][2] is None and attempts("wide", "unit")[0][0] == "hard"


def test_repeated_rows_at_a_large_magnitude_are_ill_conditioned_for_a_batch_norm():
    """An expanded input (one row repeated) gives a training-mode BatchNorm a batch variance of exactly 0,
    where torch is exact and every honest kernel that rounds its mean otherwise is off by O(1): the
    float64 twin agrees with torch there, the nearby run does not, so the judge keeps such a trial off."""
    import torch

    from xe_forge.verify.stability import conditioned, jittered

    torch.manual_seed(0)
    bn = torch.nn.BatchNorm1d(24)
    rows = torch.randn(16, 24) * 1e4
    repeated = [rows[:1].expand(16, 24)]
    with torch.no_grad():
        assert not conditioned([bn(*repeated)], [bn(*jittered(repeated, 1))], 1e-4, 1e-4)
        assert conditioned([bn(rows)], [bn(*jittered([rows], 1))], 1e-4, 1e-4)


def test_a_draw_that_saturates_the_reference_to_a_constant_is_not_informative():
    from xe_forge.verify.stability import varies

    far = 1e5 * torch.randn(8, 64, generator=_gen())
    saturated = torch.logsumexp(torch.sigmoid(far.abs()), dim=1)  # every sigmoid exactly 1: one value per row
    assert not varies([saturated]), "a kernel writing 1 + log(64) would match it"
    assert varies([torch.logsumexp(torch.sigmoid(torch.randn(8, 64, generator=_gen())), dim=1)])
    assert varies([torch.tensor([3.0]), 2.5]), "a single element or a number is not a saturation"


def test_a_wide_trials_offset_takes_its_sign_from_the_secret_seed_and_tries_the_other():
    up, down = attempts("wide", "unit", seed=0), attempts("wide", "unit", seed=1 << 17)
    assert up[0] == ("hard", 100.0, None, 0.0) and down[0] == ("hard", -100.0, None, 0.0)
    assert up[1] == ("hard", -100.0, None, 0.0), "a reference that refuses one sign gets the other"
    assert all(o < 0 for d, o, *_ in down[2:] if d == "wide") and down[-1][0] == "problem"
