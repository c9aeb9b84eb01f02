"""One check of a library's public API at an installed release (issue 37, item 3).

Run by ``benchmarks/bench_releases.py`` with the release's environment's Python and this
checkout on ``PYTHONPATH``: ``python benchmarks/releases_probe.py CHECK`` prints one JSON line
(the library's version, the outcome, the numbers behind it).  Audits are per call and
sequential (``dpclaims.percall`` + ``dpclaims.audit_sequential``, one worker: the machine has
two shared cores); accountant checks compare the library's reported ε with dp-accounting's PLD
and RDP for the same configuration; sampler checks test draws against their exact law (χ²) or
each record's inclusion rate against the accounted rate (binomial).
"""

from __future__ import annotations

import inspect
import json
import sys
import time
import warnings
from importlib import metadata
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CHECKS = {}
EXECUTION_OPTIONS = {"workers": 1, "progress": False}
SEQUENTIAL_TRIALS = 4000
"""Trials per dataset of the last look (looks of 500, 1,000, 2,000, 4,000)."""


def check(name: str):
    """Register a check under ``name``."""

    def register(function):
        CHECKS[name] = function
        return function

    return register


def _sequential(function, d0, d1, claim, seed: int = 0, trials: int = SEQUENTIAL_TRIALS) -> dict:
    """The sequential per-call audit of ``function(data, random_state)`` on ``(d0, d1)``, looks
    up to ``trials`` per dataset."""
    from dpclaims import audit_sequential, percall
    from dpclaims.audit.sequential import trials_spent
    from dpclaims.execution import Execution

    execution = Execution(**EXECUTION_OPTIONS)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = audit_sequential(
            percall(function, execution=execution),
            d0,
            d1,
            claim,
            trials=trials,
            seed=seed,
            execution=execution,
        )
    return {
        "outcome": result.verdict,
        "epsilon_lower": round(float(result.epsilon_lower), 3),
        "trials": trials_spent(result),
        "failed": result.verdict == "violation",
    }


def _diffprivlib_example():
    sys.path.insert(0, str(ROOT / "examples"))
    import diffprivlib_percall

    return diffprivlib_percall


def _claim(epsilon: float = 1.0, delta: float = 0.0, relation: str = "replace"):
    """The claim (ε, δ) per record (unit ``user``, one record each) under ``relation``."""
    from dpclaims import PrivacyClaim

    return PrivacyClaim(epsilon, delta, unit="user", relation=relation)


@check("diffprivlib-mean-no-bounds")
def diffprivlib_mean_no_bounds():
    """``tools.mean`` without bounds (taken from the data) on the example's replace-one pair."""
    dpl = _diffprivlib_example()
    return _sequential(dpl.mean_unbounded, *dpl.pairs("replace"), _claim())


@check("diffprivlib-mean-bounds")
def diffprivlib_mean_bounds():
    """``tools.mean(bounds=(0, 1))`` on the same pair."""
    dpl = _diffprivlib_example()
    return _sequential(dpl.mean_bounded, *dpl.pairs("replace"), _claim())


@check("diffprivlib-histogram-no-range")
def diffprivlib_histogram_no_range():
    """``tools.histogram`` without ``range`` (edges from the data), add/remove pair."""
    dpl = _diffprivlib_example()
    claim = _claim(relation="add-remove")
    return _sequential(dpl.histogram_unranged, *dpl.pairs("add-remove"), claim)


@check("diffprivlib-histogram-range")
def diffprivlib_histogram_range():
    """``tools.histogram(range=(0, 1))``, add/remove pair (its calibration's relation)."""
    dpl = _diffprivlib_example()
    claim = _claim(relation="add-remove")
    return _sequential(dpl.histogram_ranged, *dpl.pairs("add-remove"), claim)


LINREG_N = 10


def _linreg_pair():
    """Ten records (x, y): one at (1, 1), the rest at (0, 0); the neighbour replaces one (0, 0)
    by (4, 0).  Σy² and Σxy agree; only Σx², the coefficient issue #105 leaves unnoised for
    bounds (0, U), differs (1 vs 17)."""
    d0 = np.zeros((LINREG_N, 2))
    d0[0] = (1.0, 1.0)
    d1 = d0.copy()
    d1[1] = (4.0, 0.0)
    return d0, d1


def _linreg(data, random_state, bounds_x):
    from diffprivlib.accountant import BudgetAccountant
    from diffprivlib.models import LinearRegression

    data = np.asarray(getattr(data, "x", data)).reshape(LINREG_N, 2)
    model = LinearRegression(
        epsilon=1.0,
        bounds_X=bounds_x,
        bounds_y=(0.0, 1.0),
        fit_intercept=False,
        random_state=random_state,
        accountant=BudgetAccountant(),
    )
    return model.fit(data[:, :1], data[:, 1]).coef_.ravel()


def linreg_lower_bound_zero(data, random_state):
    """``LinearRegression(bounds_X=(0, 4))``: the X² coefficient's sensitivity is 0 (#105)."""
    return _linreg(data, random_state, (0.0, 4.0))


def linreg_symmetric_bounds(data, random_state):
    """``LinearRegression(bounds_X=(-4, 4))``: max(|L|, |L|)² = 16 is right here (control)."""
    return _linreg(data, random_state, (-4.0, 4.0))


@check("diffprivlib-linreg-bounds-0-4")
def diffprivlib_linreg_bounds_0_4():
    return _sequential(linreg_lower_bound_zero, *_linreg_pair(), _claim())


@check("diffprivlib-linreg-bounds-sym")
def diffprivlib_linreg_bounds_sym():
    d0, d1 = _linreg_pair()
    return _sequential(linreg_symmetric_bounds, d0, d1, _claim())


CLASSES = (0.0, 1.0, 2.0)


def _labels_pair(singleton: bool):
    """Twenty labels; ``singleton``: the only record of class 2 relabelled 0 (class 2
    disappears), else a record of class 1 relabelled 0 (every class stays)."""
    y0 = np.array([2.0] + [0.0] * 10 + [1.0] * 9)
    y1 = y0.copy()
    y1[0 if singleton else 19] = 0.0
    return y0, y1


def gaussian_nb_release(data, random_state):
    """``GaussianNB(bounds=(0, 1))`` fitted on one constant feature and the labels: the
    release is ``len(classes_)`` and the class counts (0 for an absent class)."""
    from diffprivlib.accountant import BudgetAccountant
    from diffprivlib.models import GaussianNB

    y = np.ravel(getattr(data, "x", data))
    model = GaussianNB(
        epsilon=1.0, bounds=(0.0, 1.0), random_state=random_state, accountant=BudgetAccountant()
    ).fit(np.zeros((len(y), 1)), y)
    counts = dict(zip(model.classes_.tolist(), model.class_count_.tolist(), strict=True))
    return np.array([len(model.classes_)] + [counts.get(c, 0.0) for c in CLASSES])


@check("diffprivlib-gnb-singleton-class")
def diffprivlib_gnb_singleton_class():
    return _sequential(gaussian_nb_release, *_labels_pair(True), _claim())


@check("diffprivlib-gnb-classes-kept")
def diffprivlib_gnb_classes_kept():
    return _sequential(gaussian_nb_release, *_labels_pair(False), _claim())


GHOST_N = 10
GHOST_CLIP = 0.1
GHOST_SIGMA = 6.0
GHOST_DELTA = 1e-5
_GHOST = {}


def _ghost_pair():
    """Ten records (x, y) at (0, 0) (gradient 0); the neighbour replaces one by (1, 1), whose
    squared-loss gradient at w = 0 has norm 2: clipped to 0.1 by the fix, to 1 by the bug."""
    d0 = np.zeros((GHOST_N, 2))
    d1 = d0.copy()
    d1[0] = (1.0, 1.0)
    return d0, d1


def _ghost_setup(data: np.ndarray):
    """``PrivacyEngine.make_private(grad_sample_mode="ghost")`` on a 1-weight linear model."""
    import torch
    from opacus import PrivacyEngine

    torch.set_num_threads(1)
    x = torch.tensor(data[:, :1], dtype=torch.float32)
    y = torch.tensor(data[:, 1], dtype=torch.float32)
    model = torch.nn.Linear(1, 1, bias=False)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=GHOST_N)
    engine = PrivacyEngine()
    if "criterion" in inspect.signature(engine.make_private).parameters:  # 1.5.3 on
        options = {"criterion": torch.nn.MSELoss()}
    else:  # 1.5.2's way: the optimizer chosen by clipping="ghost", no criterion keyword
        options = {"clipping": "ghost"}
    made = engine.make_private(
        module=model,
        optimizer=torch.optim.SGD(model.parameters(), lr=1.0),
        data_loader=loader,
        **options,
        noise_multiplier=GHOST_SIGMA,
        max_grad_norm=GHOST_CLIP,
        poisson_sampling=False,
        grad_sample_mode="ghost",
    )
    criterion = made[2] if len(made) == 4 else None  # 1.5.3 on: a loss doing both passes
    return made[0], made[1], criterion, x, y


def ghost_step(data, seed: int):
    """One DP-SGD step from w = 0 with Opacus' ghost clipping (max_grad_norm = 0.1); the
    release is the new weight.  Up to 1.5.2 the two backward passes are the public
    ``double_backward``; from 1.5.3 the loss ``make_private`` returns."""
    import torch

    data = np.asarray(getattr(data, "x", data)).reshape(GHOST_N, 2)
    key = data.tobytes()
    if key not in _GHOST:
        _GHOST[key] = _ghost_setup(data)
    model, optimizer, criterion, x, y = _GHOST[key]
    torch.manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    optimizer.zero_grad()
    if criterion is None:
        from opacus.utils.fast_gradient_clipping_utils import double_backward

        loss = torch.nn.functional.mse_loss(model(x).squeeze(1), y, reduction="none")
        double_backward(model, optimizer, loss)
    else:
        criterion(model(x).squeeze(1), y).backward()
    optimizer.step()
    return np.concatenate([p.detach().numpy().ravel() for p in model.parameters()])


@check("opacus-ghost-clipping")
def opacus_ghost_clipping():
    """Opacus PR #664: ``make_private(grad_sample_mode="ghost")`` clipped to 1, not to
    ``max_grad_norm``.  Claim: one Gaussian step, noise σ·C, replace-one (Δ = 2C)."""
    from dpclaims.privacy import gaussian_epsilon

    epsilon = gaussian_epsilon(GHOST_SIGMA * GHOST_CLIP, GHOST_DELTA, sensitivity=2 * GHOST_CLIP)
    return _sequential(ghost_step, *_ghost_pair(), _claim(epsilon, GHOST_DELTA))


_CLOSURE = {}


def closure_step(data, seed: int):
    """One DP-SGD step from w = 0 through ``optimizer.step(closure)`` (``make_private``, no
    Poisson sampling, clipping 0.1, σ = 6, the pair of :func:`_ghost_pair`); the release is
    the new weight.  Opacus PR #330: up to 1.0.1 the wrapped optimizer ran the closure again
    after the noise, so the update used the recomputed, noiseless gradient."""
    import torch
    from opacus import PrivacyEngine

    data = np.asarray(getattr(data, "x", data)).reshape(GHOST_N, 2)
    key = data.tobytes()
    if key not in _CLOSURE:
        torch.set_num_threads(1)
        x = torch.tensor(data[:, :1], dtype=torch.float32)
        y = torch.tensor(data[:, 1], dtype=torch.float32)
        model = torch.nn.Linear(1, 1, bias=False)
        loader = torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(x, y), batch_size=GHOST_N
        )
        model, optimizer, _ = PrivacyEngine().make_private(
            module=model,
            optimizer=torch.optim.SGD(model.parameters(), lr=1.0),
            data_loader=loader,
            noise_multiplier=GHOST_SIGMA,
            max_grad_norm=GHOST_CLIP,
            poisson_sampling=False,
        )
        _CLOSURE[key] = model, optimizer, x, y
    model, optimizer, x, y = _CLOSURE[key]

    def closure():
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(x).squeeze(1), y)
        loss.backward()
        return loss

    torch.manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    optimizer.step(closure)
    return np.concatenate([p.detach().numpy().ravel() for p in model.parameters()])


@check("opacus-closure")
def opacus_closure():
    """Opacus PR #330; the claim of :func:`opacus_ghost_clipping` (same step, same pair)."""
    from dpclaims.privacy import gaussian_epsilon

    epsilon = gaussian_epsilon(GHOST_SIGMA * GHOST_CLIP, GHOST_DELTA, sensitivity=2 * GHOST_CLIP)
    return _sequential(closure_step, *_ghost_pair(), _claim(epsilon, GHOST_DELTA))


NORMALISER_SIGMA = 4.0
NORMALISER_CLIP = 1.0
_NORMALISER = {}


def _normaliser_pair(add: bool):
    """One record (0, 0) (gradient 0); ``add``: the neighbour adds a second (0, 0), so only the
    dataset's size differs; else (replace-one control) it has two records either way, the
    second (0, 0) or (1, 1) (a gradient of norm 2, clipped to 1)."""
    d0 = np.zeros((1 if add else 2, 2))
    d1 = np.zeros((2, 2))
    if not add:
        d1[1] = (1.0, 1.0)
    return d0, d1


def normaliser_step(data, seed: int):
    """One DP-SGD step from w = 0 through ``make_private`` (Poisson sampling, a loader of
    batch size 2: sample rate 1/len(loader) = 1), release the new weight.  Opacus divides the
    noisy sum by ``expected_batch_size = int(len(dataset) * sample_rate)``: the private size."""
    import torch
    from opacus import PrivacyEngine

    data = np.asarray(getattr(data, "x", data)).reshape(-1, 2)
    key = data.tobytes()
    if key not in _NORMALISER:
        torch.set_num_threads(1)
        x = torch.tensor(data[:, :1], dtype=torch.float32)
        y = torch.tensor(data[:, 1], dtype=torch.float32)
        model = torch.nn.Linear(1, 1, bias=False)
        loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(x, y), batch_size=2)
        model, optimizer, _ = PrivacyEngine().make_private(
            module=model,
            optimizer=torch.optim.SGD(model.parameters(), lr=1.0),
            data_loader=loader,
            noise_multiplier=NORMALISER_SIGMA,
            max_grad_norm=NORMALISER_CLIP,
        )
        _NORMALISER[key] = model, optimizer, x, y
    model, optimizer, x, y = _NORMALISER[key]
    torch.manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    optimizer.zero_grad()
    torch.nn.functional.mse_loss(model(x).squeeze(1), y).backward()
    optimizer.step()
    return np.concatenate([p.detach().numpy().ravel() for p in model.parameters()])


def _normaliser_claim(relation: str):
    """One Gaussian step of noise σ·C at δ = 10⁻⁵: Δ = C add/remove, 2C replace-one."""
    from dpclaims.privacy import gaussian_epsilon

    sensitivity = NORMALISER_CLIP * (1.0 if relation == "add-remove" else 2.0)
    epsilon = gaussian_epsilon(NORMALISER_SIGMA * NORMALISER_CLIP, 1e-5, sensitivity)
    return _claim(epsilon, 1e-5, relation)


@check("opacus-expected-batch-size")
def opacus_expected_batch_size():
    """Opacus #571/#819: one record added changes only the divisor (1 → 2)."""
    return _sequential(normaliser_step, *_normaliser_pair(True), _normaliser_claim("add-remove"))


@check("opacus-expected-batch-size-replace")
def opacus_expected_batch_size_replace():
    """Control: the same step under replace-one (equal sizes, one gradient 0 → clipped norm 1)."""
    return _sequential(normaliser_step, *_normaliser_pair(False), _normaliser_claim("replace"))


def _independent(sigma: float, rate: float, steps: int, delta: float) -> dict:
    """dp-accounting's PLD and RDP ε for ``steps`` Poisson-subsampled Gaussian steps."""
    from dpclaims.privacy import subsampled_gaussian_epsilon

    return {
        accountant: subsampled_gaussian_epsilon(sigma, rate, steps, delta, accountant=accountant)
        for accountant in ("pld", "rdp")
    }


def _accountant_row(config: str, reported: float, independent: dict) -> dict:
    """Flag a reported ε below the range ε ≥ 0 or below PLD's by more than 1 %."""
    pld = independent["pld"]
    below = reported < 0 or reported < 0.99 * pld
    return {
        "config": config,
        "reported": reported,
        "pld": pld,
        "rdp": independent["rdp"],
        "ratio": reported / pld if pld > 0 else None,
        "failed": below,
    }


ACCOUNTANT_CONFIGS = (
    (1.0, 1.0, 1, 0.7),
    (1.0, 0.01, 100, 0.5),
    (1.1, 0.01, 1000, 1e-5),
)
"""(σ, q, steps, δ): two at a large δ (issue #585's regime), one of a usual training run."""


@check("opacus-accountants")
def opacus_accountants():
    """Opacus' RDP, PRV and GDP accountants against dp-accounting (Opacus #585, PR #844)."""
    from opacus.accountants import GaussianAccountant, PRVAccountant, RDPAccountant

    rows = []
    for sigma, rate, steps, delta in ACCOUNTANT_CONFIGS:
        independent = _independent(sigma, rate, steps, delta)
        for accountant in (RDPAccountant, PRVAccountant, GaussianAccountant):
            config = f"{accountant.__name__}: σ={sigma}, q={rate}, steps={steps}, δ={delta}"
            instance = accountant()
            instance.history = [(sigma, rate, steps)]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    reported = float(instance.get_epsilon(delta=delta))
                except Exception as error:  # noqa: BLE001 - the row says what the library raised
                    rows.append({"config": config, "error": f"{type(error).__name__}: {error}"})
                    continue
            rows.append(_accountant_row(config, reported, independent))
    return {"rows": rows, "failed": any(r.get("failed") or "error" in r for r in rows)}


TF_PRIVACY_ORDERS = [1 + 1e-8] + [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64))
"""The issue's orders: one at 1 + 10⁻⁸, then the library's usual ones."""
TF_PRIVACY_CONFIGS = (
    (1.0, 105 / 100_000, 1, 1e-3),
    (1.0, 0.01, 100, 1e-5),
    (1.1, 0.01, 1000, 1e-5),
)
"""(σ, q, steps, δ): the issue's configuration, then two of usual training runs."""


@check("tensorflow_privacy-rdp-order-near-one")
def tensorflow_privacy_rdp_order_near_one():
    """TF Privacy #166: ``get_privacy_spent`` returns ε = 0 when an order near 1 is among the
    orders (its KL-divergence case).  ``sys.skip_tf_privacy_import`` is the library's own switch
    for using the analysis without TensorFlow."""
    sys.skip_tf_privacy_import = True
    from tensorflow_privacy.privacy.analysis.rdp_accountant import compute_rdp, get_privacy_spent

    rows = []
    for sigma, rate, steps, delta in TF_PRIVACY_CONFIGS:
        rdp = compute_rdp(q=rate, noise_multiplier=sigma, steps=steps, orders=TF_PRIVACY_ORDERS)
        epsilon, _, order = get_privacy_spent(TF_PRIVACY_ORDERS, rdp, target_delta=delta)
        config = f"RDP, orders from 1+1e-8 (chose {order:.9g}): σ={sigma}, q={rate:g}, "
        config += f"steps={steps}, δ={delta:g}"
        independent = _independent(sigma, rate, steps, delta)
        rows.append(_accountant_row(config, float(epsilon), independent))
    return {"rows": rows, "failed": any(r["failed"] for r in rows)}


@check("opendp-zcdp-to-approxdp")
def opendp_zcdp_to_approxdp():
    """``make_zCDP_to_approxDP(make_base_gaussian(σ))`` at δ near 1 (OpenDP #621, PR #622)."""
    from opendp.combinators import make_zCDP_to_approxDP
    from opendp.measurements import make_base_gaussian
    from opendp.mod import enable_features

    enable_features("contrib", "floating-point")
    rows = []
    for sigma, delta in ((1.0, 0.3), (1.0, 0.7), (1.0, 0.99), (4.0, 0.5)):
        curve = make_zCDP_to_approxDP(make_base_gaussian(sigma)).map(1.0)
        reported = float(curve.epsilon(delta))
        config = f"Gaussian σ={sigma}, Δ=1 (ρ={1 / (2 * sigma**2):g}), δ={delta}"
        rows.append(_accountant_row(config, reported, _independent(sigma, 1.0, 1, delta)))
    return {"rows": rows, "failed": any(r["failed"] for r in rows)}


SUM_N = 10
_SUM_CHAIN = []


def _sum_pair():
    """Ten integers in [0, 1], all 0; the neighbour replaces one by 1 (symmetric distance 2)."""
    d0 = np.zeros(SUM_N)
    d1 = d0.copy()
    d1[0] = 1.0
    return d0, d1


def _sum_chain():
    """``make_sized_bounded_sum(10, (0, 1), T=int) >> make_base_geometric(scale)`` at the scale
    OpenDP's ``binary_search_param`` picks for ε = 1 at d_in = 2 (one record replaced)."""
    from opendp.meas import make_base_geometric
    from opendp.mod import binary_search_param, enable_features
    from opendp.trans import make_sized_bounded_sum

    enable_features("contrib")
    total = make_sized_bounded_sum(SUM_N, (0, 1), T=int)
    scale = binary_search_param(lambda s: total >> make_base_geometric(s), d_in=2, d_out=1.0)
    return total >> make_base_geometric(scale), scale


def opendp_sized_sum(data, seed: int):
    """One release of :func:`_sum_chain` (OpenDP draws from the OS: ``seed`` is not used)."""
    if not _SUM_CHAIN:
        _SUM_CHAIN.extend(_sum_chain())
    return np.array([_SUM_CHAIN[0]([int(v) for v in np.ravel(getattr(data, "x", data))])])


@check("opendp-sized-sum-sensitivity")
def opendp_sized_sum_sensitivity():
    """OpenDP #314: the sized bounded sum's stability ``d_in · (U − L) / 2`` truncated in integer
    arithmetic, 0 for bounds (0, 1), so the calibration search returns a scale near 0.
    Claim: ε = 1 replace-one (the search's target)."""
    result = _sequential(opendp_sized_sum, *_sum_pair(), _claim())
    return result | {"scale": _SUM_CHAIN[1]}


THRESHOLD_KEYS = 100_000
THRESHOLD_CONFIDENCE = 0.95


@check("opendp-threshold-delta")
def opendp_threshold_delta():
    """OpenDP #2922: ``make_count_by >> then_laplace_threshold(scale=1, threshold=5)`` over
    100,000 keys of one record each.  Under add/remove a key of one record is absent from the
    neighbour, so δ is at least the rate at which such a key is released; flagged when that
    rate's lower confidence bound exceeds the δ the library reports."""
    import opendp.prelude as dp

    from dpclaims.audit.bounds import rate_upper

    dp.enable_features("contrib")
    release = dp.t.make_count_by(
        dp.vector_domain(dp.atom_domain(T=str)), dp.symmetric_distance()
    ) >> dp.m.then_laplace_threshold(scale=1.0, threshold=5)
    epsilon, delta = release.map(1)
    released = len(release([f"user{i}" for i in range(THRESHOLD_KEYS)]))
    alpha = 1.0 - THRESHOLD_CONFIDENCE
    lower = 1.0 - float(rate_upper(THRESHOLD_KEYS - released, THRESHOLD_KEYS, alpha))
    return {
        "config": "count_by >> laplace_threshold(scale=1, threshold=5), keys of one record",
        "epsilon": float(epsilon),
        "reported": float(delta),
        "rate": released / THRESHOLD_KEYS,
        "lower": lower,
        "failed": lower > delta,
    }


SAMPLER_DRAWS = 200_000
SAMPLER_SCALE = 3.0
SAMPLER_ALPHA = 1e-3
"""Level of each sampler's χ² test (two samplers: at most 0.002 together when both are exact)."""


def _folded_law(log_weight, scale: float) -> np.ndarray:
    """The exact law of ``|X|`` on 0..40·scale, for P(X = x) ∝ exp(log_weight(|x|))."""
    k = np.arange(int(40 * scale) + 1)
    law = np.exp(log_weight(k)) * np.where(k == 0, 1.0, 2.0)
    return law / law.sum()


def _sampler_row(config: str, draws: np.ndarray, law: np.ndarray) -> dict:
    """χ² goodness of fit of ``|draws|`` against ``law`` (cells expected below 5 pooled)."""
    from dpclaims.stats import pooled_chisquare_pvalue

    counts = np.bincount(np.minimum(np.abs(draws), law.size - 1), minlength=law.size)
    p_value = pooled_chisquare_pvalue(counts, law)
    line = f"p = {p_value:.2g} (level {SAMPLER_ALPHA:g})"
    return {"config": config, "line": line, "p": p_value, "failed": p_value < SAMPLER_ALPHA}


@check("opendp-sampler-bias")
def opendp_sampler_bias():
    """OpenDP #2638 (fix PR #2639): Dashu's rational ÷ integer returned a wrong denominator,
    and the CKS20 Bernoulli(exp(−x)) sampler divides x by k that way, so the integer Laplace
    and Gaussian mechanisms drew from a biased law.  Each mechanism, released on 200,000
    zeros, is tested against its exact law P(x) ∝ exp(−|x|/s), exp(−x²/2s²)."""
    import opendp.prelude as dp

    dp.enable_features("contrib")
    domain = dp.vector_domain(dp.atom_domain(T=int))
    scale = SAMPLER_SCALE
    mechanisms = (
        ("make_laplace", dp.l1_distance(T=int), lambda k: -k / scale),
        ("make_gaussian", dp.l2_distance(T=int), lambda k: -(k**2) / (2 * scale**2)),
    )
    rows = []
    for name, metric, log_weight in mechanisms:
        measurement = getattr(dp.m, name)(domain, metric, scale=scale)
        draws = np.asarray(measurement([0] * SAMPLER_DRAWS))
        config = f"{name}(int, scale={scale:g}): {SAMPLER_DRAWS:,} draws, χ² vs the exact law"
        rows.append(_sampler_row(config, draws, _folded_law(log_weight, scale)))
    return {"rows": rows, "failed": any(r["failed"] for r in rows)}


WEIGHTED_LABELS = np.array([2] + [0] * 60 + [1] * 39)
"""100 records in three classes, one of them a single record (the corpus' pair)."""
WEIGHTED_BATCH = 10
WEIGHTED_STEPS = 4000


def _weighted_loader(poisson_sampling: bool):
    """``make_private`` on a loader with a class-balancing ``WeightedRandomSampler`` (weight
    1/class size, 100 draws with replacement, batches of 10): the returned loader, yielding
    record indices, and the rate Opacus accounts, ``1 / len(data_loader)``."""
    import torch
    from opacus import PrivacyEngine

    torch.set_num_threads(1)
    labels = torch.tensor(WEIGHTED_LABELS)
    weights = 1.0 / torch.bincount(labels)[labels].double()
    dataset = torch.utils.data.TensorDataset(torch.arange(len(labels)), labels)
    sampler = torch.utils.data.WeightedRandomSampler(weights, len(labels), replacement=True)
    loader = torch.utils.data.DataLoader(dataset, batch_size=WEIGHTED_BATCH, sampler=sampler)
    model = torch.nn.Linear(1, 1)
    _, _, private = PrivacyEngine().make_private(
        module=model,
        optimizer=torch.optim.SGD(model.parameters(), lr=1.0),
        data_loader=loader,
        noise_multiplier=1.0,
        max_grad_norm=1.0,
        poisson_sampling=poisson_sampling,
    )
    return private, 1.0 / len(loader)


def _inclusion_row(poisson_sampling: bool) -> dict:
    """Each record's inclusion rate over 4,000 batches of the private loader against the rate
    the accountant uses (:func:`dpclaims.audit.sampler.inclusion_check`, 95 %, Bonferroni)."""
    import torch

    from dpclaims.audit.sampler import inclusion_check

    loader, rate = _weighted_loader(poisson_sampling)

    def batches(data, rng, draws):
        torch.manual_seed(int(rng.integers(2**31)))
        masks = np.zeros((draws, len(data)), dtype=bool)
        step = 0
        while step < draws:
            for indices, _ in loader:
                masks[step, indices.numpy()] = True
                step += 1
                if step == draws:
                    break
        return masks

    finding = inclusion_check(batches, WEIGHTED_LABELS, rate=rate, draws=WEIGHTED_STEPS)
    n = finding.numbers
    line = (
        f"accounted q = {rate:g}; record {n['worst_unit']} included at "
        f"{n['worst_frequency']:.3f} (p = {n['worst_p']:.2g}), all records at "
        f"{n['overall_frequency']:.3f}; {n['units_above']} of {len(WEIGHTED_LABELS)} above q "
        "at 95 % (Bonferroni)"
    )
    config = f"make_private(poisson_sampling={poisson_sampling})"
    return {"config": config, "line": line, "failed": not finding.passed}


@check("opacus-weighted-sampler")
def opacus_weighted_sampler():
    """Opacus #813: with a ``WeightedRandomSampler``, Opacus accounts at q = 1/len(loader).
    ``poisson_sampling=False`` keeps the user's sampler, which includes the single-record
    class in most batches."""
    row = _inclusion_row(poisson_sampling=False)
    return {"rows": [row], "failed": row["failed"]}


@check("opacus-weighted-sampler-poisson")
def opacus_weighted_sampler_poisson():
    """Control: the default ``poisson_sampling=True`` replaces the sampler by Poisson sampling
    at the accounted rate (#813's complaint there is the silent replacement, not a leak)."""
    row = _inclusion_row(poisson_sampling=True)
    return {"rows": [row], "failed": row["failed"]}


COVARIANCE_N = 100


def _covariance_pair():
    """100 records (x, y) at the corners (±1, ±1) in equal numbers (variances 1, covariance
    0: the noisy matrix stays positive definite), both columns declared in [−1, 1]; the
    neighbour replaces a record (−1, −1) by (100, 100), which the fix clamps to (1, 1): the
    largest change within the bounds."""
    d0 = np.tile([[1.0, 1.0], [-1.0, 1.0], [1.0, -1.0], [-1.0, -1.0]], (COVARIANCE_N // 4, 1))
    d1 = d0.copy()
    d1[3] = (100.0, 100.0)
    return d0, d1


def smartnoise_covariance(data, seed: int):
    """``snsynth.models.dp_covariance.DPcovariance(n, cols, bounds, global_eps=1).release``:
    the Laplace-noised covariance matrix (lower triangle) behind ``DPLinearRegression``, whose
    own regression step fails on numpy 2 (``np.where`` on a 0-d array).  The library draws its
    noise from numpy's global generator, seeded here."""
    import pandas as pd
    from snsynth.models.dp_covariance import DPcovariance

    np.random.seed(seed)
    frame = pd.DataFrame(np.asarray(getattr(data, "x", data)).reshape(-1, 2), columns=["x", "y"])
    bounds = pd.DataFrame({"x": [-1.0, 1.0], "y": [-1.0, 1.0]})
    return np.asarray(DPcovariance(len(frame), ["x", "y"], bounds, 1.0).release(frame))


def _sklearn_linear_model_base() -> None:
    """smartnoise-synth 1.0.5 imports ``sklearn.linear_model.base``, private ``_base`` since
    scikit-learn 0.22 and gone in 0.24 (no release that has it installs on Python 3.11)."""
    import sklearn.linear_model._base as base

    sys.modules.setdefault("sklearn.linear_model.base", base)


@check("smartnoise_synth-covariance-unclipped")
def smartnoise_covariance_unclipped():
    """SmartNoise #622: ``DPcovariance.release`` clamps the data, then computes the covariance
    on the unclamped copy.  Claim: ε = 1 (the ``budget``) replace-one, n public.  Looks up to
    2,000 trials per dataset: a call takes ~6 ms (pandas), and the fixed release's noise (scaled
    for a change of 2(U − L)²/n per entry) is far above what the pair moves."""
    _sklearn_linear_model_base()
    return _sequential(smartnoise_covariance, *_covariance_pair(), _claim(), trials=2000)


JAX_PRIVACY_CONFIG = {
    "epsilon": 1.1,
    "delta": 1e-5,
    "clipping_norm": 1.0,
    "batch_size": 10,
    "gradient_accumulation_steps": 8,
    "train_steps": 100,
    "train_size": 1000,
    "noise_multiplier": 1.0,
}
"""PR #287's configuration: σ = 1 for 100 updates of 80 examples (10 × 8 accumulated) of 1,000."""


@check("jax_privacy-noise-multiplier-validation")
def jax_privacy_noise_multiplier_validation():
    """jax_privacy PR #287: ``DPKerasConfig`` validates a given ``noise_multiplier`` at the
    physical batch size (q = 10/1,000) while training samples the effective one (q = 80/1,000);
    a configuration it accepts claims ε ≤ its target, checked against dp-accounting at the
    effective rate."""
    import os

    os.environ.setdefault("KERAS_BACKEND", "jax")
    try:
        from jax_privacy.keras_api import DPKerasConfig
    except ImportError:  # 1.0.0's layout
        from jax_privacy.keras.keras_api import DPKerasConfig

    c = JAX_PRIVACY_CONFIG
    rate = c["batch_size"] * c["gradient_accumulation_steps"] / c["train_size"]
    config = (
        f"DPKerasConfig: σ={c['noise_multiplier']}, batch {c['batch_size']} × "
        f"{c['gradient_accumulation_steps']} accumulated (q={rate:g}), "
        f"{c['train_steps']} steps, δ={c['delta']:g}, target ε={c['epsilon']}"
    )
    independent = _independent(c["noise_multiplier"], rate, c["train_steps"], c["delta"])
    try:
        DPKerasConfig(**c)
    except ValueError as error:
        row = {"config": config, "rejected": str(error).split(".")[0], "failed": False}
        row |= {"pld": independent["pld"], "rdp": independent["rdp"]}
        return {"rows": [row], "failed": False}
    row = _accountant_row(config, c["epsilon"], independent)
    return {"rows": [row], "failed": row["failed"]}


MINSEP_CONFIGS = ((12, 3), (20, 4))
"""(iterations n, bands = min separation): up to ⌈n / sep⌉ participations of a user."""


def _minsep_sensitivity_squared_brute_force(coef: np.ndarray, n: int, min_sep: int) -> float:
    """max ‖C x‖² over every participation pattern (iterations ≥ ``min_sep`` apart) and every
    sign of each participation's unit contribution; C is the n × n lower-triangular Toeplitz
    matrix whose first column is ``coef`` padded with zeros.  Independent of the library's
    closed form (no monotonicity assumed)."""
    from itertools import combinations, product

    column = np.zeros(n)
    column[: len(coef)] = coef
    strategy = np.zeros((n, n))
    for j in range(n):
        strategy[j:, j] = column[: n - j]
    best = 0.0
    for size in range(1, -(-n // min_sep) + 1):
        for rounds in combinations(range(n), size):
            if np.any(np.diff(rounds) < min_sep):
                continue
            signs = np.array(list(product((1.0, -1.0), repeat=size)))  # (2^size, size)
            released = strategy[:, rounds] @ signs.T  # (n, 2^size)
            best = max(best, float(np.max(np.sum(released**2, axis=0))))
    return best


def _minsep_rows(pass_n: bool) -> dict:
    """The banded-Toeplitz strategy of ``examples/dpmf_strategy_optimization.py`` (the
    released ``optimize_banded_toeplitz(n, bands=sep)``, ``sep`` coefficients) and its
    multi-participation sensitivity by the released ``minsep_sensitivity_squared``, called as
    the example did before PR #238 (``n`` omitted: the matrix taken as sep × sep) or with
    ``n``; flagged when below the brute-force maximum by more than 10⁻⁹ relative."""
    import os

    os.environ.setdefault("JAX_ENABLE_X64", "1")
    from jax_privacy.matrix_factorization import toeplitz

    rows = []
    for n, sep in MINSEP_CONFIGS:
        coef = np.asarray(toeplitz.optimize_banded_toeplitz(n, bands=sep, max_optimizer_steps=1000))
        options = {"n": n} if pass_n else {}
        reported = float(toeplitz.minsep_sensitivity_squared(coef, min_sep=sep, **options))
        exact = _minsep_sensitivity_squared_brute_force(coef, n, sep)
        call = "with n" if pass_n else "n omitted (the example's call)"
        rows.append(
            {
                "config": f"n={n}, bands=min_sep={sep}, {call}",
                "line": f"sensitivity² {reported:.4g} vs brute force {exact:.4g} "
                f"({reported / exact:.3f}×)",
                "failed": reported < exact * (1 - 1e-9),
            }
        )
    return {"rows": rows, "failed": any(row["failed"] for row in rows)}


@check("jax_privacy-minsep-sensitivity-example-call")
def jax_privacy_minsep_sensitivity_example_call():
    """jax_privacy #238: the example passed ``sep`` coefficients without ``n``, so the
    released function sized C by the coefficients and counted one participation."""
    return _minsep_rows(pass_n=False)


@check("jax_privacy-minsep-sensitivity-with-n")
def jax_privacy_minsep_sensitivity_with_n():
    """Control: the same release and strategy with ``n`` passed (PR #238's fix)."""
    return _minsep_rows(pass_n=True)


def main(argv: list[str]) -> int:
    name = argv[1]
    library = name.split("-")[0]
    start = time.perf_counter()
    try:
        result = CHECKS[name]()
    except Exception as error:  # noqa: BLE001 - reported as the row's error
        result = {"error": f"{type(error).__name__}: {error}"}
    result["seconds"] = round(time.perf_counter() - start, 1)
    try:
        result["version"] = metadata.version(library)
    except metadata.PackageNotFoundError:
        result["version"] = None
    print(json.dumps(result, default=lambda v: None if v is None else float(v)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
