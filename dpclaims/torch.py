"""PyTorch and Opacus training code as dpclaims mechanisms, without glue (``dpclaims[torch]``).

One call turns a training function into what the auditor runs,
``mech(data, rng, trials) -> (trials, k)``::

    from dpclaims import torch as dpt

    mech = dpt.mechanism(train, output="weights")  # train(dataset, seed) -> torch.nn.Module

- **Data.**  The audit's dataset (a :class:`~dpclaims.data.UserDataset`, or an array of
  records) reaches ``train`` as a :class:`torch.utils.data.TensorDataset` of ``(x, y)``
  (float32, on :func:`default_device`; the items of all users in user order, ``y`` omitted
  when the data has no labels), converted once per call of the mechanism.
- **Seeds.**  Each trial gets a seed ``rng.integers(2**63 - 1)`` from the audit's ``rng``;
  ``train`` runs inside :func:`torch.random.fork_rng` with ``torch.manual_seed(seed)``, so code
  that draws from torch's global generator (Opacus does by default) is reproducible and
  leaves the caller's generator as it was.  The same audit seed gives the same numbers.
- **Output rule.**  ``"weights"`` (every parameter, flattened in ``named_parameters`` order),
  ``"score"`` (the canary's score, see below) or any ``output(model) -> array``.
- **Canaries.**  :class:`InputCanary` is a record added (or put in place of user 0);
  ``"score"`` is then the model's output on it (a logit; its loss is a monotone function of
  it).  :class:`GradientCanary` is a marker record whose per-example gradient is replaced by
  a chosen vector (the white-box threat model of Nasr et al. 2023); ``"score"`` is the
  final weights' movement along that vector.  Only :class:`TorchDPSGD` replaces gradients; in an
  Opacus loop do it by hand between ``loss.backward()`` and ``optimizer.step()``: for each
  parameter ``p``, ``p.grad_sample[rows] = part_of_the_vector`` where ``rows`` are the
  batch rows equal to the marker (Opacus clips and noises ``grad_sample`` in ``step``).
- **Batched.**  A :class:`TorchDPSGD` description (model, per-example loss, steps, learning rate,
  clip norm, noise multiplier, Poisson rate) trains all trials of a call at once with
  :func:`torch.func.vmap` over stacked parameters; it is the batched twin of a plain-torch
  or Opacus DP-SGD loop with the same numbers.  A ``train_batched(dataset, seeds) -> (trials,
  P)`` function of your own plugs in the same way (``mechanism(train, train_batched=...)``).
  Any other ``train`` is run one trial at a time with a progress bar.
- **Opacus.**  :func:`opacus_mechanism` reads the DP-SGD an Opacus ``train`` configured with
  ``make_private`` and runs it batched; on each dataset it checks 50 looped runs of ``train``
  itself against it (:class:`LoopCheck`) and refuses a ``train`` that does more.

CUDA is used when present (:func:`default_device`), the CPU otherwise.  Every error for bad
input is one line (:class:`~dpclaims.errors.InputError` or
:class:`~dpclaims.errors.MechanismError`).
"""

from __future__ import annotations

import copy
import inspect
import math
import warnings
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import numpy as np

from .data import UserDataset
from .errors import InputError, MechanismError, check_count, check_positive, check_trials
from .vocabulary import Relation

try:
    import torch
    from torch.func import functional_call, grad, vmap
    from torch.utils.data import TensorDataset
except ImportError as exc:  # pragma: no cover - exercised without the extra
    raise ImportError(
        "dpclaims.torch needs PyTorch: pip install 'dpclaims[torch]' (torch>=2.13)"
    ) from exc

__all__ = [
    "GradientCanary",
    "InputCanary",
    "LoopCheck",
    "OpacusConfig",
    "OpacusMechanism",
    "opacus_config",
    "opacus_mechanism",
    "record_opacus",
    "TorchDPSGD",
    "TorchMechanism",
    "as_tensors",
    "default_device",
    "flat_weights",
    "mechanism",
]

MARKER = float(2.0**40)
"""Default feature value of a :class:`GradientCanary`'s marker record (exact in float32)."""

CHUNK_BYTES = 256 * 2**20
"""Bytes held at once on the batched path: a chunk of trials' random draws ``(trials, steps,
examples + P)`` and one step's per-example arrays (``(trials, examples, P)`` gradients, or
three ``(trials, examples, widest layer)`` on a Linear stack)."""

_SEED_BOUND = 2**63 - 1


def default_device() -> torch.device:
    """``cuda`` when a GPU is visible to torch, else ``cpu``."""
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def _records(data: Any) -> tuple[np.ndarray, np.ndarray | None]:
    """``(x (N, d), y (N,) or None)``: the items of a UserDataset in user order, or rows."""
    if isinstance(data, UserDataset):
        x = data.x.reshape(-1, data.d)
        y = None if data.y is None else data.y.reshape(-1)
        return x, y
    x = np.asarray(data, dtype=float)
    if x.ndim == 1:
        x = x[:, None]
    if x.ndim != 2:
        raise InputError(
            f"data must be a UserDataset or an array of records (N, d), got shape {x.shape}"
        )
    return x, None


def as_tensors(data: Any, device: torch.device | str | None = None) -> TensorDataset:
    """The dataset as a :class:`~torch.utils.data.TensorDataset` of ``(x (N, d), y (N,))``
    float32 tensors on ``device`` (``y`` omitted when ``data`` has no labels)."""
    device = default_device() if device is None else torch.device(device)
    x, y = _records(data)
    tensors = [torch.tensor(x, dtype=torch.float32, device=device)]
    if y is not None:
        tensors.append(torch.tensor(y, dtype=torch.float32, device=device))
    return TensorDataset(*tensors)


def flat_weights(model: torch.nn.Module) -> torch.Tensor:
    """Every parameter of ``model`` flattened into one vector (``named_parameters`` order)."""
    return torch.cat([p.detach().reshape(-1) for p in model.parameters()])


def _add_record(data: Any, x: np.ndarray, y: float | None, relation: str) -> Any:
    """``data`` with the record ``(x, y)`` appended (add-remove) or in place of user 0."""
    if relation not in (Relation.ADD_REMOVE, Relation.REPLACE):
        raise InputError(f"relation must be 'add-remove' or 'replace', got {relation!r}")
    if isinstance(data, UserDataset):
        if data.m != 1:
            raise InputError(
                f"canaries are single records: pass item-level data (m = 1), got m = {data.m}"
            )
        if (data.y is None) != (y is None):
            raise InputError("the canary needs a label y exactly when the dataset has labels")
        row = np.asarray(x, dtype=float).reshape(1, 1, data.d)
        if relation == Relation.REPLACE:
            new_x = data.x.copy()
            new_x[0] = row[0]
            new_y = None if y is None else data.y.copy()
            if new_y is not None:
                new_y[0] = y
            return UserDataset(new_x, new_y)
        new_y = None if y is None else np.concatenate([data.y, [[y]]])
        return UserDataset(np.concatenate([data.x, row]), new_y)
    rows, _ = _records(data)
    row = np.asarray(x, dtype=float).reshape(1, rows.shape[1])
    if relation == Relation.REPLACE:
        out = rows.copy()
        out[0] = row[0]
        return out
    return np.concatenate([rows, row])


def _check_record(x: Any, name: str) -> np.ndarray:
    record = np.asarray(x, dtype=float).reshape(-1)
    if record.size == 0 or not np.all(np.isfinite(record)):
        raise InputError(f"{name} must be a finite, non-empty feature vector, got {x!r}")
    return record


@dataclass(frozen=True)
class InputCanary:
    """A record ``(x, y)`` added to the dataset (or put in place of user 0).

    ``output="score"`` is the trained model's output on ``x`` (all its entries, flattened).
    """

    x: Any
    y: float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "x", _check_record(self.x, "InputCanary.x"))

    def pair(self, data: Any, relation: str = "add-remove") -> tuple[Any, Any]:
        """``(d0, d1)``: ``data`` and ``data`` with the canary (neighbours under ``relation``)."""
        width = _records(data)[0].shape[1]
        if self.x.size != width:
            raise InputError(
                f"InputCanary.x has {self.x.size} features, the data has {width}; pass a canary "
                f"input of {width} features"
            )
        return data, _add_record(data, self.x, self.y, relation)

    def score(self, model: torch.nn.Module) -> torch.Tensor:
        """The model's output on the canary input, flattened."""
        param = next(iter(model.parameters()), None)
        device = param.device if param is not None else torch.device("cpu")
        x = torch.as_tensor(self.x, dtype=torch.float32, device=device)
        return model(x[None]).detach().reshape(-1)


@dataclass(frozen=True)
class GradientCanary:
    """A marker record whose per-example gradient is replaced by ``gradient`` (Dirac canary).

    Wherever the dataset holds a record with features equal to the marker ``x`` (default
    ``MARKER`` in every feature), :class:`TorchDPSGD` uses ``gradient`` (a vector of the model's
    P parameters, ``named_parameters`` order, clipped like any other) as that record's
    gradient at every step.  ``output="score"`` is ``−⟨θ_T, g⟩ / ‖g‖``: how far the weights
    went along the canary's descent direction (from a start point fixed across trials).
    """

    gradient: Any
    x: Any = None
    y: float | None = None
    _g: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        g = np.asarray(self.gradient, dtype=float).reshape(-1)
        if g.size == 0 or not np.all(np.isfinite(g)) or not np.any(g):
            raise InputError(
                "GradientCanary.gradient must be a finite, non-zero vector of the model's "
                f"parameters, got {self.gradient!r}"
            )
        object.__setattr__(self, "_g", g)
        if self.x is not None:
            object.__setattr__(self, "x", _check_record(self.x, "GradientCanary.x"))

    def marker(self, d: int) -> np.ndarray:
        """The marker record's features for data of ``d`` features."""
        if self.x is None:
            return np.full(d, MARKER)
        if self.x.size != d:
            raise InputError(f"GradientCanary.x has {self.x.size} features, the data has {d}")
        return self.x

    def pair(self, data: Any, relation: str = "add-remove") -> tuple[Any, Any]:
        """``(d0, d1)``: ``data`` and ``data`` with the marker record."""
        x, y = _records(data)
        label = None if y is None else (0.0 if self.y is None else self.y)
        return data, _add_record(data, self.marker(x.shape[1]), label, relation)

    def direction(self, device: torch.device | str = "cpu") -> torch.Tensor:
        """The unit vector ``g / ‖g‖`` (float32, on ``device``)."""
        g = torch.as_tensor(self._g, dtype=torch.float32, device=device)
        return g / torch.linalg.vector_norm(g)


@dataclass(frozen=True)
class TorchDPSGD:
    """DP-SGD of a torch model, described so it can be batched over trials.

    Per step: every record is in the batch independently with probability ``sampling_rate``
    (Poisson); each sampled record's gradient of ``loss(model(x[None]), y[None])`` is clipped
    to l2 norm ``clip_norm``; ``θ ← θ − step_size · (Σ clipped + N(0, σ² C² I)) / B`` with
    ``B = batch_size`` (default ``sampling_rate × records``, Opacus' expected batch size — a
    function of the private dataset's size; fix it for add/remove claims).  This is what
    Opacus' ``make_private(..., poisson_sampling=True)`` with plain SGD runs.  ``model``'s
    parameters when the description is made are θ_0 for every trial; its buffers are
    read-only.  ``canary`` replaces the gradient of its marker records.

    :meth:`train` runs one training (a plain loop over steps, per-example gradients by
    :func:`torch.func.vmap`); :meth:`train_batched` runs many at once (a second vmap, over
    trials).  Both draw, for each seed, ``torch.rand(steps, N)`` then ``torch.randn(steps,
    P)`` from a generator seeded with it, so they agree on the same seeds.
    """

    model: torch.nn.Module
    loss: Callable
    _: KW_ONLY
    steps: int
    step_size: float
    clip_norm: float
    noise_multiplier: float
    sampling_rate: float
    batch_size: float | None = None
    canary: GradientCanary | None = None
    ghost: bool = True

    def __post_init__(self) -> None:
        if not isinstance(self.model, torch.nn.Module):
            raise InputError(f"model must be a torch.nn.Module, got {type(self.model).__name__}")
        if not callable(self.loss):
            raise InputError("loss must be callable: loss(outputs, targets) -> scalar tensor")
        object.__setattr__(self, "steps", check_trials(self.steps, "steps"))
        for name in ("step_size", "clip_norm"):
            object.__setattr__(self, name, check_positive(getattr(self, name), name))
        sigma = self.noise_multiplier
        if not isinstance(sigma, (int, float)) or isinstance(sigma, bool) or not sigma >= 0:
            raise InputError(f"noise_multiplier must be a number >= 0, got {sigma!r}")
        rate = check_positive(self.sampling_rate, "sampling_rate")
        if rate > 1:
            raise InputError(f"sampling_rate must be in (0, 1], got {rate}")
        if self.batch_size is not None:
            object.__setattr__(self, "batch_size", check_positive(self.batch_size, "batch_size"))
        if self.canary is not None and not isinstance(self.canary, GradientCanary):
            raise InputError("canary must be a GradientCanary (an InputCanary is data)")
        names, shapes = [], []
        for name, p in self.model.named_parameters():
            names.append(name)
            shapes.append(tuple(p.shape))
        if not names:
            raise InputError("model has no parameters to train")
        object.__setattr__(self, "_names", tuple(names))
        object.__setattr__(self, "_layers", _linear_stack(self.model) if self.ghost else None)
        object.__setattr__(self, "_shapes", tuple(shapes))
        theta0 = flat_weights(self.model).float().clone()
        object.__setattr__(self, "_theta0", theta0)
        if self.canary is not None and self.canary._g.size != theta0.numel():
            raise InputError(
                f"GradientCanary.gradient has {self.canary._g.size} entries, the model has "
                f"{theta0.numel()} parameters"
            )

    @property
    def parameters(self) -> int:
        """P, the number of trained parameters."""
        return int(self._theta0.numel())

    def _unflatten(self, flat: torch.Tensor) -> dict:
        out, start = {}, 0
        for name, shape in zip(self._names, self._shapes, strict=True):
            size = math.prod(shape)
            out[name] = flat[start : start + size].reshape(shape)
            start += size
        return out

    def _per_example(self) -> Callable:
        """``(θ (P,), X (N, d), Y (N,)) -> (N, P)`` per-example gradients."""
        model, loss = self.model, self.loss

        def example_loss(flat, x, y):
            out = functional_call(model, self._unflatten(flat), (x[None],))
            return loss(out, y[None])

        return vmap(grad(example_loss), in_dims=(None, 0, 0))

    def _setup(self, dataset: TensorDataset) -> tuple:
        tensors = dataset.tensors
        x = tensors[0]
        y = tensors[1] if len(tensors) > 1 else torch.zeros(len(x), device=x.device)
        n = len(x)
        normaliser = self.batch_size if self.batch_size is not None else self.sampling_rate * n
        if self.canary is None:
            return x, y, n, normaliser, None, None
        marker = torch.as_tensor(self.canary.marker(x.shape[1]), dtype=x.dtype, device=x.device)
        rows = torch.all(x == marker, dim=1)
        g = torch.as_tensor(self.canary._g, dtype=torch.float32, device=x.device)
        return x, y, n, normaliser, rows, g

    def _draws(self, seed: int, n: int, device: torch.device) -> tuple:
        gen = torch.Generator(device=device).manual_seed(int(seed))
        u = torch.rand(self.steps, n, generator=gen, device=device)
        z = torch.randn(self.steps, self.parameters, generator=gen, device=device)
        return u < self.sampling_rate, z

    def _step(self, theta, grads, mask, noise, *, rows, g, normaliser):
        """One noisy step; ``grads (..., N, P)``, ``mask (..., N)``, ``noise (..., P)``."""
        if rows is not None:
            grads = torch.where(rows[:, None], g, grads)
        norms = torch.linalg.vector_norm(grads, dim=-1)
        factor = torch.clamp(self.clip_norm / (norms + 1e-12), max=1.0) * mask
        total = torch.einsum("...n,...np->...p", factor, grads)
        noisy = total + (self.noise_multiplier * self.clip_norm) * noise
        return theta - (self.step_size / normaliser) * noisy

    def _widest(self) -> int:
        return max(max(m.in_features, m.out_features) for _, m in self._layers if _is_linear(m))

    def _ghost_step(self, theta, x, y, mask, noise, *, rows, g, normaliser):
        """One noisy step of T trials on a Linear stack; ``theta (T, P)``, ``mask (T, N)`` (1.0
        where sampled), ``y (T, N, ...)`` the targets repeated for each trial."""
        trials, n = mask.shape
        params = {
            name: theta[:, start : start + math.prod(shape)].reshape(trials, *shape)
            for name, shape, start in zip(self._names, self._shapes, self._starts(), strict=True)
        }
        # Until the first Linear, h is the data itself (N, d), shared by all trials: its norms
        # and the layer's products are one GEMM for all trials, never a (T, N, d) copy.  The
        # layers' outputs z are leaves or graph nodes; autograd gives dloss_i/dz_i for each.
        inputs, outputs = [], []
        with torch.enable_grad():
            h = x
            for prefix, module in self._layers:
                if not _is_linear(module):
                    h = module(h)
                    continue
                weight = params[prefix + "weight"]  # (T, out, in)
                inputs.append(h.detach())
                if h.ndim == 2:  # (T·out, N) in one GEMM, read as (T, N, out)
                    z = (weight.reshape(-1, h.shape[1]) @ h.T).reshape(trials, -1, n)
                    z = z.transpose(1, 2)
                else:
                    z = torch.matmul(h, weight.transpose(1, 2))
                if module.bias is not None:
                    z = z + params[prefix + "bias"][:, None, :]
                if not z.requires_grad:
                    z.requires_grad_(True)
                outputs.append(z)
                h = z
            if self._loss_is_mean(h[0], y[0]):  # one fused call on all T·N rows
                total = self.loss(h.reshape(trials * n, -1), y.reshape(-1)) * (trials * n)
            else:
                one = vmap(vmap(lambda out, target: self.loss(out[None], target[None])))
                total = one(h, y).sum()
            backprops = torch.autograd.grad(total, outputs)
        biased = [m.bias is not None for _, m in self._layers if _is_linear(m)]
        if len(inputs) == 1 and backprops[0].shape[-1] == 1:  # one output: |b|·‖(a, 1)‖
            a, b = inputs[0], backprops[0][..., 0]
            norms = b.abs().mul_((a.square().sum(-1) + float(biased[0])).sqrt())
        else:
            norms = None
            for a, b, bias in zip(inputs, backprops, biased, strict=True):
                term = b.square().sum(-1) * (a.square().sum(-1) + float(bias))
                norms = term if norms is None else norms.add_(term)
            norms = norms.sqrt_()
        factor = torch.div(self.clip_norm, norms).clamp_(max=1.0).mul_(mask)
        if rows is not None:
            factor = factor * ~rows
        parts = []
        for a, b, bias in zip(inputs, backprops, biased, strict=True):
            weighted = b * factor[..., None]  # (T, N, out)
            if a.ndim == 2:
                flat = weighted.transpose(1, 2).reshape(-1, n) @ a  # (T·out, in)
                parts.append(flat.reshape(trials, -1))
            else:
                parts.append(torch.matmul(weighted.transpose(1, 2), a).reshape(trials, -1))
            if bias:
                parts.append(weighted.sum(1))
        total = torch.cat(parts, dim=1)
        if rows is not None:
            clipped = g * min(1.0, self.clip_norm / float(torch.linalg.vector_norm(g)))
            total = total + (mask * rows).sum(1, keepdim=True) * clipped
        noisy = total + (self.noise_multiplier * self.clip_norm) * noise
        return theta - (self.step_size / normaliser) * noisy

    def _loss_is_mean(self, out: torch.Tensor, y: torch.Tensor) -> bool:
        """Whether ``loss`` on a batch is the mean of its values on each row (torch's losses
        with ``reduction="mean"``), checked once per data shape on two probe batches."""
        key = (tuple(out.shape[1:]), out.dtype, y.dtype, str(out.device))
        cache = self.__dict__.setdefault("_mean_checks", {})
        if key not in cache:
            gen = torch.Generator(device=out.device).manual_seed(0)
            probe = out.detach()[:5] + torch.randn(out[:5].shape, generator=gen, device=out.device)
            target = y[: len(probe)]
            rows = torch.stack(
                [self.loss(probe[i : i + 1], target[i : i + 1]) for i in range(len(probe))]
            )
            ok = all(
                torch.allclose(
                    self.loss(probe[:k], target[:k]), rows[:k].mean(), rtol=1e-5, atol=1e-6
                )
                for k in (len(probe), 2)
            )
            cache[key] = bool(ok)
        return cache[key]

    def _starts(self) -> list[int]:
        starts, start = [], 0
        for shape in self._shapes:
            starts.append(start)
            start += math.prod(shape)
        return starts

    @torch.no_grad()
    def train(self, dataset: TensorDataset, seed: int) -> torch.nn.Module:
        """One DP-SGD training on ``dataset``; a copy of ``model`` holding θ_T."""
        x, y, n, normaliser, rows, g = self._setup(dataset)
        mask, noise = self._draws(seed, n, x.device)
        per_example = self._per_example()
        theta = self._theta0.to(x.device)
        for t in range(self.steps):
            grads = per_example(theta, x, y)
            theta = self._step(
                theta, grads, mask[t], noise[t], rows=rows, g=g, normaliser=normaliser
            )
        model = copy.deepcopy(self.model).to(x.device)
        torch.nn.utils.vector_to_parameters(theta, model.parameters())
        return model

    @torch.no_grad()
    def train_batched(self, dataset: TensorDataset, seeds: Any) -> torch.Tensor:
        """θ_T of one training per seed, ``(len(seeds), P)``, batched with vmap over trials."""
        x, y, n, normaliser, rows, g = self._setup(dataset)
        seeds = [int(s) for s in np.asarray(seeds).reshape(-1)]
        per_trial = vmap(self._per_example(), in_dims=(0, None, None))
        step = 3 * n * (self.parameters if self._layers is None else self._widest())
        width = 4 * (step + self.steps * (n + self.parameters))  # a step's arrays, the draws
        chunk = max(1, CHUNK_BYTES // width)
        out = []
        for start in range(0, len(seeds), chunk):  # torch.func.grad ignores the outer no_grad
            part = seeds[start : start + chunk]
            uniform = torch.empty(len(part), self.steps, n, device=x.device)
            noise = torch.empty(len(part), self.steps, self.parameters, device=x.device)
            gen = torch.Generator(device=x.device)
            for i, seed in enumerate(part):  # the draws of _draws, written in place
                gen.manual_seed(seed)
                torch.rand(self.steps, n, generator=gen, out=uniform[i])
                torch.randn(self.steps, self.parameters, generator=gen, out=noise[i])
            theta = self._theta0.to(x.device).expand(len(part), -1)
            targets = y.expand(len(part), *y.shape).contiguous()  # (T, N, ...)
            mask = torch.empty(len(part), n, device=x.device)  # 1.0 where sampled
            for t in range(self.steps):
                torch.lt(uniform[:, t], self.sampling_rate, out=mask)
                if self._layers is not None:
                    theta = self._ghost_step(
                        theta, x, targets, mask, noise[:, t], rows=rows, g=g,
                        normaliser=normaliser,
                    )  # fmt: skip
                    continue
                grads = per_trial(theta, x, y)
                theta = self._step(
                    theta, grads, mask, noise[:, t], rows=rows, g=g, normaliser=normaliser
                )
            out.append(theta)
        return torch.cat(out)


def _old_dpsgd(
    model: torch.nn.Module,
    loss: Callable,
    *,
    lr: float | None = None,
    sample_rate: float | None = None,
    **fields: Any,
) -> TorchDPSGD:
    """``DPSGD(model, loss, lr=…, sample_rate=…, …)``: the old name and keywords of
    :class:`TorchDPSGD` (``step_size``, ``sampling_rate``), with a ``DeprecationWarning``."""
    warnings.warn(
        "dpclaims.torch.DPSGD(lr=, sample_rate=) is renamed TorchDPSGD(step_size=, "
        "sampling_rate=), the names of dpclaims.algorithms.baselines.DPSGD",
        DeprecationWarning,
        stacklevel=2,
    )
    old = {"step_size": lr, "sampling_rate": sample_rate}
    return TorchDPSGD(model, loss, **{k: v for k, v in old.items() if v is not None}, **fields)


def __getattr__(name: str) -> Any:
    """``DPSGD``, the old name of :class:`TorchDPSGD` (deprecated, with a warning)."""
    if name == "DPSGD":
        return _old_dpsgd
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _is_linear(module: torch.nn.Module) -> bool:
    return type(module) is torch.nn.Linear


def _linear_stack(model: torch.nn.Module) -> list | None:
    """``[(prefix, module)]`` when ``model`` is a Linear or a Sequential of Linear layers and
    parameter-free modules (the ghost path), else None."""
    if _is_linear(model):
        return [("", model)]
    if type(model) is not torch.nn.Sequential:
        return None
    layers = []
    for name, module in model.named_children():
        has_state = any(True for _ in module.parameters()) or any(True for _ in module.buffers())
        if not _is_linear(module) and has_state:
            return None
        layers.append((name + ".", module))
    return layers if any(_is_linear(m) for _, m in layers) else None


def _check_train(train: Any, name: str = "train") -> Callable:
    if not callable(train):
        raise InputError(f"{name} must be callable: {name}(dataset, seed) -> model")
    try:
        inspect.signature(train).bind(None, None)
    except TypeError:
        raise InputError(
            f"{name} must take two arguments, {name}(dataset, seed); got "
            f"{getattr(train, '__name__', type(train).__name__)}{inspect.signature(train)}"
        ) from None
    except ValueError:  # no signature (a builtin): trust it
        pass
    return train


@dataclass
class TorchMechanism:
    """``mech(data, rng, trials) -> (trials, k)`` around a torch training (see the module).

    Made by :func:`mechanism`; its fields are the choices made there.
    """

    train: Callable
    output: str | Callable = "weights"
    canary: InputCanary | GradientCanary | None = None
    train_batched: Callable | None = None
    model: torch.nn.Module | None = None
    device: torch.device | None = None
    progress: bool | None = None

    def __call__(self, data: Any, rng: np.random.Generator, trials: int) -> np.ndarray:
        trials = check_trials(trials)
        device = self.device if self.device is not None else default_device()
        dataset = as_tensors(data, device)
        seeds = rng.integers(_SEED_BOUND, size=trials)
        if self.train_batched is not None:
            theta = self.train_batched(dataset, seeds)
            return self._batched_outputs(theta, seeds, device)
        rows = []
        devices = [device] if device.type == "cuda" else []
        bar = _progress(trials, self.progress)
        for seed in seeds:
            with torch.random.fork_rng(devices=devices):
                torch.manual_seed(int(seed))
                model = self.train(dataset, int(seed))
                rows.append(self._one_output(model, int(seed)))
            bar.update(1)
        bar.close()
        return _stack(rows)

    def _one_output(self, model: Any, seed: int) -> np.ndarray:
        if not isinstance(model, torch.nn.Module):
            raise MechanismError(
                f"train must return a torch.nn.Module, got {type(model).__name__} (seed {seed})"
            )
        match self.output:
            case "weights":
                value = flat_weights(model)
            case "score":
                if isinstance(self.canary, GradientCanary):
                    value = -(flat_weights(model).float() @ self.canary.direction(device="cpu"))
                else:
                    with torch.no_grad():
                        value = self.canary.score(model)
            case rule:
                value = rule(model)
        return _as_row(value, seed)

    def _batched_outputs(self, theta: Any, seeds: np.ndarray, device: torch.device):
        if not isinstance(theta, torch.Tensor) or theta.ndim != 2 or len(theta) != len(seeds):
            got = tuple(theta.shape) if isinstance(theta, torch.Tensor) else type(theta).__name__
            raise MechanismError(
                f"train_batched must return a tensor (trials, P) = ({len(seeds)}, P), got {got}"
            )
        if self.output == "weights":
            return _check_rows(theta.detach().double().cpu().numpy(), "weights")
        if self.output == "score" and isinstance(self.canary, GradientCanary):
            direction = self.canary.direction(theta.device)
            score = -(theta.detach().float() @ direction)
            return _check_rows(score.double().cpu().numpy()[:, None])
        if self.model is None:
            raise InputError(
                "output rules other than 'weights' need a model to load the weights into: "
                "use a TorchDPSGD description as train, or output='weights'"
            )
        model = copy.deepcopy(self.model).to(device)
        rows = []
        for seed, row in zip(seeds, theta.detach(), strict=True):
            torch.nn.utils.vector_to_parameters(row, model.parameters())
            rows.append(self._one_output(model, int(seed)))
        return _stack(rows)


def _progress(total: int, progress: bool | None):
    from tqdm.auto import tqdm

    return tqdm(total=total, disable=None if progress is None else not progress, unit="run")


def _as_row(value: Any, seed: int) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        value = value.detach().double().cpu().numpy()
    try:
        row = np.asarray(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise MechanismError(
            f"the output rule must return numbers (a float or an array), got "
            f"{type(value).__name__} (seed {seed})"
        ) from None
    if not np.all(np.isfinite(row)):
        raise MechanismError(
            f"the output rule returned NaN or inf for seed {seed}: {row[:4]}; make output(model) "
            "finite (a diverged training? lower the learning rate)"
        )
    return row


def _stack(rows: list[np.ndarray]) -> np.ndarray:
    sizes = {row.size for row in rows}
    if len(sizes) > 1:
        raise MechanismError(
            f"the output rule returned vectors of different lengths {sorted(sizes)}; it must "
            "give the same k for every trial"
        )
    return np.stack(rows)


def _check_rows(out: np.ndarray, what: str = "score") -> np.ndarray:
    bad = ~np.all(np.isfinite(out.reshape(len(out), -1)), axis=1)
    if bad.any():
        raise MechanismError(
            f"the batched training gave NaN or inf {what} in {int(bad.sum())} of {len(out)} "
            "trials; lower the learning rate or check the loss"
        )
    return out


@dataclass(frozen=True)
class OpacusConfig:
    """The DP-SGD an Opacus ``make_private`` set up, read off the objects it returned.

    ``noise_multiplier`` and ``max_grad_norm`` from the ``DPOptimizer``, ``sample_rate`` from
    the ``DPDataLoader`` (Opacus sets it to ``1 / len(data_loader)``), ``normaliser`` the
    optimizer's ``expected_batch_size`` (``int(len(dataset) · sample_rate)``; 1 with
    ``loss_reduction="sum"``), ``lr`` the SGD learning rate, ``steps`` the optimizer steps one
    training took, ``records`` the size of the dataset it was given.  Opacus computes the
    rate and the normaliser from that dataset (Opacus #571, #819), so they may differ between
    neighbours: :func:`opacus_mechanism` reads them for each dataset it is given.
    """

    noise_multiplier: float
    max_grad_norm: float
    sample_rate: float
    normaliser: float
    lr: float
    steps: int
    records: int

    def summary(self) -> str:
        """``σ = …, C = …, q = …, batch …, lr …, T steps``."""
        return (
            f"σ = {self.noise_multiplier:.4g}, C = {self.max_grad_norm:g}, q = "
            f"{self.sample_rate:.4g}, batch {self.normaliser:g}, lr {self.lr:g}, "
            f"{self.steps} steps"
        )

    def describe(
        self,
        model: torch.nn.Module,
        loss: Callable,
        *,
        canary: GradientCanary | None = None,
        ghost: bool = True,
    ) -> TorchDPSGD:
        """The :class:`TorchDPSGD` with these numbers, from ``model``'s parameters (θ_0), with
        ``canary`` and ``ghost`` as there."""
        return TorchDPSGD(
            model,
            loss,
            steps=self.steps,
            step_size=self.lr,
            clip_norm=self.max_grad_norm,
            noise_multiplier=self.noise_multiplier,
            sampling_rate=self.sample_rate,
            batch_size=self.normaliser,
            canary=canary,
            ghost=ghost,
        )


def opacus_config(optimizer: Any, data_loader: Any, *, steps: int, records: int) -> OpacusConfig:
    """Read an :class:`OpacusConfig` from the optimizer and data loader ``make_private``
    returned; one line naming what :class:`TorchDPSGD` cannot describe (momentum, weight decay,
    another optimizer, per-layer or adaptive clipping, a loader that is not Poisson)."""
    name = type(optimizer).__name__
    if name != "DPOptimizer":
        raise InputError(
            f"the optimizer is Opacus' {name}; TorchDPSGD describes DPOptimizer (flat clipping): "
            "audit the training looped with dpt.mechanism(train) instead"
        )
    inner = optimizer.original_optimizer
    if type(inner) is not torch.optim.SGD:
        raise InputError(
            f"the optimizer wraps {type(inner).__name__}; TorchDPSGD describes plain SGD: audit "
            "the training looped with dpt.mechanism(train) instead"
        )
    if len(inner.param_groups) != 1:
        raise InputError("the optimizer has several parameter groups; TorchDPSGD has one lr")
    group = inner.param_groups[0]
    extras = {k: group.get(k, 0) for k in ("momentum", "weight_decay", "dampening")}
    if any(extras.values()) or group.get("nesterov", False):
        raise InputError(
            f"the SGD optimizer has {extras}; TorchDPSGD describes plain SGD (all 0): audit the "
            "training looped with dpt.mechanism(train) instead"
        )
    if type(data_loader).__name__ != "DPDataLoader":
        raise InputError(
            f"the data loader is a {type(data_loader).__name__}, not Opacus' Poisson "
            "DPDataLoader (make_private(..., poisson_sampling=True)); TorchDPSGD samples by Poisson"
        )
    mean = optimizer.loss_reduction == "mean"
    return OpacusConfig(
        noise_multiplier=float(optimizer.noise_multiplier),
        max_grad_norm=float(optimizer.max_grad_norm),
        sample_rate=float(data_loader.sample_rate),
        normaliser=float(optimizer.expected_batch_size) if mean else 1.0,
        lr=float(group["lr"]),
        steps=check_trials(steps, "steps (optimizer steps of one training)"),
        records=int(records),
    )


def record_opacus(train: Callable, data: Any, *, seed: int = 0) -> tuple[OpacusConfig, Any]:
    """Run ``train(dataset, seed)`` once with ``PrivacyEngine.make_private`` watched: the
    :class:`OpacusConfig` it set up for ``data`` (steps counted on the returned optimizer)
    and a copy of the module as ``make_private`` received it (θ_0)."""
    try:
        from opacus import PrivacyEngine
    except ImportError as exc:
        raise InputError("reading an Opacus training needs opacus: pip install opacus") from exc
    train = _check_train(train)
    seen: dict = {}
    original = PrivacyEngine.make_private

    def watched(engine, *args: Any, **kwargs: Any):
        module = kwargs.get("module", args[0] if args else None)
        seen["module"] = copy.deepcopy(module)
        out = original(engine, *args, **kwargs)
        optimizer, loader = out[1], out[2]
        step = optimizer.step
        seen.update(optimizer=optimizer, loader=loader, steps=0)

        def counted(*a: Any, **k: Any):
            seen["steps"] += 1
            return step(*a, **k)

        optimizer.step = counted
        return out

    dataset = as_tensors(data)
    PrivacyEngine.make_private = watched
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(int(seed))
            train(dataset, int(seed))
    finally:
        PrivacyEngine.make_private = original
    if "optimizer" not in seen:
        raise InputError(
            "train(dataset, seed) never called PrivacyEngine.make_private; describe its DP-SGD "
            "with dpt.TorchDPSGD(...) or audit it looped with dpt.mechanism(train)"
        )
    config = opacus_config(
        seen["optimizer"], seen["loader"], steps=seen["steps"], records=len(dataset)
    )
    module = seen["module"]
    return config, getattr(module, "_module", module)


LOOP_RUNS = 50
"""Looped runs of the user's ``train`` per dataset that :func:`opacus_mechanism` compares with
its batched description (``loop_runs=``)."""

LOOP_LEVEL = 1e-3
"""The level of that comparison (``loop_level=``): a ``train`` that runs the DP-SGD it
configured fails it with probability at most this, on each dataset."""

LOOP_REFERENCE = 2000
"""Batched runs of the description the looped runs are compared with."""

_LOOP_SEEDS = (41, 42)  # fixed: the check gives the same answer on every run


@dataclass(frozen=True)
class LoopCheck:
    """``runs`` looped trainings of the user's ``train`` on a dataset of ``records`` records
    against ``reference`` batched runs of the :class:`TorchDPSGD` that ``make_private`` configured:
    the two-sample Kolmogorov–Smirnov test of each output column; ``pvalue`` is the smallest
    p-value times the number of columns (Bonferroni), ``statistic`` and ``column`` its test's."""

    records: int
    runs: int
    reference: int
    column: int
    statistic: float
    pvalue: float
    level: float

    @property
    def passed(self) -> bool:
        """Whether the looped and batched outputs agree at ``level``."""
        return self.pvalue >= self.level

    def describe(self) -> str:
        """``… looped runs vs … batched, Kolmogorov–Smirnov D = … on output column j, p = …
        (level …)``."""
        return (
            f"{self.runs} looped runs vs {self.reference} batched, Kolmogorov–Smirnov D = "
            f"{self.statistic:.3f} on output column {self.column}, p = {self.pvalue:.2g} "
            f"(level {self.level:g})"
        )


def _loop_check(looped: np.ndarray, batched: np.ndarray, *, records: int, level: float):
    """The :class:`LoopCheck` of looped outputs ``(runs, k)`` against batched ``(M, k)``."""
    from scipy.stats import ks_2samp

    tests = [ks_2samp(looped[:, j], batched[:, j]) for j in range(looped.shape[1])]
    column = int(np.argmin([t.pvalue for t in tests]))
    return LoopCheck(
        records=records,
        runs=len(looped),
        reference=len(batched),
        column=column,
        statistic=float(tests[column].statistic),
        pvalue=min(1.0, float(tests[column].pvalue) * len(tests)),
        level=level,
    )


@dataclass
class OpacusMechanism:
    """``mech(data, rng, trials)``: an Opacus training function run as its batched
    :class:`TorchDPSGD` description, checked against looped runs of the function itself (see
    :func:`opacus_mechanism`)."""

    train: Callable
    loss: Callable
    output: str | Callable = "weights"
    canary: InputCanary | GradientCanary | None = None
    device: torch.device | None = None
    loop_runs: int = LOOP_RUNS
    loop_level: float = LOOP_LEVEL
    configs: dict = field(default_factory=dict)
    described: dict = field(default_factory=dict)
    checks: dict = field(default_factory=dict)

    def config(self, data: Any) -> tuple[OpacusConfig, torch.nn.Module]:
        """What Opacus sets up on ``data`` (one recorded training per distinct dataset)."""
        key = _data_key(data)
        if key not in self.configs:
            self.configs[key] = record_opacus(self.train, data)
        return self.configs[key]

    def description(self, data: Any) -> TorchDPSGD:
        """The :class:`TorchDPSGD` Opacus runs on ``data`` (made once per recorded dataset)."""
        config, model = self.config(data)
        key = (config, id(model))
        if key not in self.described:
            gradient = self.canary if isinstance(self.canary, GradientCanary) else None
            self.described[key] = config.describe(model, self.loss, canary=gradient)
        return self.described[key]

    def check_loop(self, data: Any) -> LoopCheck | None:
        """``loop_runs`` runs of ``train`` itself on ``data`` against the description (once
        per dataset, fixed seeds); None when not compared (``loop_runs=0``, or the data holds
        a gradient canary's marker, whose gradient only the description replaces)."""
        key = _data_key(data)
        if key not in self.checks:
            self.checks[key] = None
            if self.loop_runs and not self._has_marker(data):
                options = dict(output=self.output, canary=self.canary, device=self.device)
                looped = mechanism(self.train, progress=False, **options)
                batched = mechanism(self.description(data), **options)
                first, second = (np.random.default_rng(seed) for seed in _LOOP_SEEDS)
                self.checks[key] = _loop_check(
                    looped(data, first, self.loop_runs),
                    batched(data, second, LOOP_REFERENCE),
                    records=len(_records(data)[0]),
                    level=self.loop_level,
                )
        return self.checks[key]

    def _has_marker(self, data: Any) -> bool:
        if not isinstance(self.canary, GradientCanary):
            return False
        x, _ = _records(data)
        return bool(np.any(np.all(x == self.canary.marker(x.shape[1]), axis=1)))

    def __call__(self, data: Any, rng: np.random.Generator, trials: int) -> np.ndarray:
        check = self.check_loop(data)
        if check is not None and not check.passed:
            raise MechanismError(
                f"your train() differs from the DP-SGD configured by make_private on the "
                f"dataset of {check.records} records: {check.describe()}; train does more than "
                "that DP-SGD (training after it, another output?): audit it looped with "
                "dpt.mechanism(train)"
            )
        described = mechanism(
            self.description(data), output=self.output, canary=self.canary, device=self.device
        )
        return described(data, rng, trials)

    def audit_notes(self) -> list[str]:
        """The audit's scope: the DP-SGD ``make_private`` configured, and how ``train``
        compared with it on each dataset."""
        checks = []
        for key, (config, _) in self.configs.items():
            check = self.checks.get(key)
            if check is None:
                found = "not compared with train looped" + (
                    " (loop_runs=0)" if not self.loop_runs else " (gradient canary's marker)"
                )
            else:
                found = f"train looped agreed with it ({check.describe()})"
            checks.append(f"on {config.records} records ({config.summary()}), {found}")
        return [
            "opacus_mechanism audited the DP-SGD configured by make_private, run batched, not "
            "train itself: " + "; ".join(checks)
        ]


def _data_key(data: Any) -> tuple:
    x, y = _records(data)
    return (x.shape, x.tobytes(), None if y is None else y.tobytes())


def opacus_mechanism(
    train: Any,
    *,
    loss: Callable,
    output: str | Callable = "weights",
    canary: InputCanary | GradientCanary | None = None,
    device: torch.device | str | None = None,
    loop_runs: int = LOOP_RUNS,
    loop_level: float = LOOP_LEVEL,
) -> OpacusMechanism:
    """An Opacus training ``train(dataset, seed) -> model`` as a batched mechanism, no twin
    written by hand.

    On each dataset it is given, the mechanism runs ``train`` once with
    ``PrivacyEngine.make_private`` watched (:func:`record_opacus`), reads the DP-SGD it set up
    (noise multiplier, clip norm, Poisson rate, expected batch size, learning rate, optimizer
    steps: :class:`OpacusConfig`) and trains all trials of the call at once as that
    :class:`TorchDPSGD`, from the module ``make_private`` received.  The numbers are read per
    dataset because Opacus computes the rate (``1 / len(data_loader)``) and the expected
    batch size from the dataset it is given: a canary added to 256 records with batches of
    32 makes the rate 1/9 and the normaliser 28 (Opacus #571, #819), and the audit sees it.

    ``loss`` is the per-batch loss the training minimises, ``loss(model(x), y)`` (the mean
    over the batch, as Opacus' default ``loss_reduction="mean"`` expects).  ``output`` and
    ``canary`` are as for :func:`mechanism` (a :class:`GradientCanary` is applied by the
    description only).  Plain SGD with flat clipping and Poisson sampling only
    (:func:`opacus_config` names anything else); a model initialised at random in ``train``
    is described at the start point of the recorded run.

    What is audited is that DP-SGD, not the rest of ``train`` (training after it, say).  So on
    each dataset the mechanism also runs ``train`` itself ``loop_runs`` times (looped, fixed
    seeds) and compares each output column with :data:`LOOP_REFERENCE` batched runs by a
    two-sample Kolmogorov–Smirnov test (:class:`LoopCheck`, Bonferroni over the columns): below
    ``loop_level`` it raises a :class:`~dpclaims.errors.MechanismError` ("your train() differs
    from the DP-SGD configured by make_private"), and every audit's ``warnings`` say what was
    audited and how ``train`` compared (:meth:`OpacusMechanism.audit_notes`).  With
    ``loop_runs=0`` nothing is compared (the notes say so); datasets holding a
    :class:`GradientCanary`'s marker are not compared (only the description replaces its
    gradient).  A ``train`` that runs the DP-SGD it configured fails the check with probability
    at most ``loop_level`` per dataset; 50 runs see, for example, three non-private epochs
    after training.
    """
    if not callable(loss):
        raise InputError("loss must be callable: loss(outputs, targets) -> scalar tensor")
    level = check_positive(loop_level, "loop_level")
    if level >= 1:
        raise InputError(f"loop_level must be in (0, 1), got {loop_level!r}; pass e.g. 0.001")
    return OpacusMechanism(
        train=_check_train(train),
        loss=loss,
        output=output,
        canary=canary,
        device=None if device is None else torch.device(device),
        loop_runs=check_count(loop_runs, "loop_runs", minimum=0, example=LOOP_RUNS),
        loop_level=level,
    )


def mechanism(
    train: Any,
    *,
    output: str | Callable = "weights",
    canary: InputCanary | GradientCanary | None = None,
    train_batched: Callable | None = None,
    device: torch.device | str | None = None,
    progress: bool | None = None,
) -> TorchMechanism:
    """Wrap a training function into a dpclaims mechanism ``mech(data, rng, trials)``.

    Parameters
    ----------
    train : ``train(dataset, seed) -> torch.nn.Module`` (an Opacus or plain torch loop; it
        gets a TensorDataset and an int seed, and runs under ``torch.manual_seed(seed)``), or
        a :class:`TorchDPSGD` description (batched over trials with vmap)
    output : ``"weights"`` (the flattened parameters, k = P), ``"score"`` (the canary's score,
        needs ``canary``) or ``output(model) -> float or array`` (k entries)
    canary : the :class:`InputCanary` or :class:`GradientCanary` for ``output="score"``;
        defaults to a TorchDPSGD description's canary
    train_batched : ``train_batched(dataset, seeds) -> (trials, P)`` final weights, for your
        own batched trainer; a TorchDPSGD description brings its own
    device : where the tensors live; default :func:`default_device` (CUDA when present)
    progress : show a progress bar on the looped path (default: when stderr is a terminal)
    """
    if isinstance(train, TorchDPSGD):
        if train_batched is None:
            train_batched = train.train_batched
        if canary is None:
            canary = train.canary
        runner = train.train
    else:
        runner = _check_train(train)
    if train_batched is not None:
        _check_train(train_batched, "train_batched")
    if isinstance(output, str):
        if output not in ("weights", "score"):
            raise InputError(
                f"output must be 'weights', 'score' or a callable output(model), got {output!r}"
            )
        if output == "score" and not isinstance(canary, (InputCanary, GradientCanary)):
            raise InputError("output='score' needs canary=InputCanary(...) or GradientCanary(...)")
    elif not callable(output):
        raise InputError(
            f"output must be 'weights', 'score' or a callable output(model), got {output!r}"
        )
    return TorchMechanism(
        train=runner,
        output=output,
        canary=canary,
        train_batched=train_batched,
        model=train.model if isinstance(train, TorchDPSGD) else None,
        device=None if device is None else torch.device(device),
        progress=progress,
    )
