"""The MLP classifier's loss curve, both ways, as an image (matplotlib, an optional extra).

Trains ``mlp_classifier.py``'s network in both models and draws the two loss curves on one
plot: they lie on top of each other. Without matplotlib (``pip install 'funcgrad[plot]'``)
it prints the curve as text instead.

Run: python examples/loss_curve.py [OUTPUT.png]
"""
from __future__ import annotations

import sys

from mlp_classifier import train_functional, train_mutable


def main(path: str = "loss_curve.png") -> None:
    functional, _ = train_functional()
    mutable, _ = train_mutable()
    try:
        import matplotlib
    except ImportError:
        print("matplotlib is not installed (pip install 'funcgrad[plot]'); the curve as text:")
        for i in range(0, len(functional), 30):
            print(f"{i:4d} {functional[i]:.4f} " + "#" * int(40 * functional[i] / functional[0]))
        return
    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 3.5))
    ax.plot(functional, label="functional (funcgrad.numpy + value_and_grad)", linewidth=3, alpha=0.6)
    ax.plot(mutable, "--", label="mutable (funcgrad.mutable + backward)", color="black")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy")
    ax.set_yscale("log")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    print(f"wrote {path}: {len(functional)} steps, curves identical: {functional == mutable}")


if __name__ == "__main__":
    main(*sys.argv[1:2])
