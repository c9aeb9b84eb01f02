"""A label leak, caught by ``dpclaims audit --search`` from a plain dataset (issue 28).

``class_histogram`` releases noisy per-class counts (Laplace, ℓ1 sensitivity 2 under replace,
ε = 1) over the classes *present in the private labels*: diffprivlib #106's bug (the label set
inferred from the private data).  Where a class disappears it releases an exact 0 instead of a
noisy count, so ε = ∞ on that pair.  The fix is ``present = np.arange(CLASSES)`` (the public
label domain).  Run::

    python examples/label_leak.py plain.npz          # 40 users, each class held by 10
    dpclaims audit examples/label_leak.py:class_histogram --d0 plain.npz --d1 plain.npz \\
        --search --trials 20000 --save-pair found
    dpclaims audit examples/label_leak.py:class_histogram --d0 found/d0.npz \\
        --d1 found/d1.npz --replay
"""

import sys

import numpy as np

CLASSES = 4
EPSILON = 1.0


def class_histogram(data, rng, trials):
    """Noisy per-class counts over the classes present in the private labels (diffprivlib #106)."""
    y = data.y.ravel().astype(int)
    present = np.unique(y)  # the bug: the classes should be the public np.arange(CLASSES)
    out = np.zeros((trials, CLASSES))
    counts = np.bincount(y, minlength=CLASSES)[present]
    out[:, present] = counts + rng.laplace(0.0, 2.0 / EPSILON, (trials, len(present)))
    return out


if __name__ == "__main__":
    rng = np.random.default_rng(0)
    np.savez(sys.argv[1], x=rng.standard_normal((40, 1, 2)), y=np.arange(40) % CLASSES)
