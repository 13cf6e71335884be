"""torch.autograd for funcgrad.mutable: backward, grad and anomaly mode (`_grad`), custom
Functions (`function`), Jacobians and Hessians (`functional`), Variable, the graph's Node."""
from __future__ import annotations

import sys

from . import forward_ad, function, functional, grad_mode, graph
from ._grad import _calculate_shape, backward, detect_anomaly, grad, is_anomaly_enabled, set_detect_anomaly
from .function import Function, FunctionCtx, InplaceFunction, once_differentiable
from .gradcheck import gradcheck, gradgradcheck  # noqa: E402  (torchtests' module)
from .grad_mode import (_force_original_view_tracking, is_multithreading_enabled,
                        is_view_replay_enabled, set_multithreading_enabled)
from .graph import _unsafe_preserve_version_counter
from .variable import Variable
from .._ops import SavedTensor  # (torch.autograd re-exports torch._C._autograd's)

__all__ = ["backward", "grad", "Function", "FunctionCtx", "InplaceFunction", "once_differentiable",
           "Variable", "set_detect_anomaly", "detect_anomaly", "is_anomaly_enabled", "function",
           "functional", "grad_mode", "graph", "gradcheck", "gradgradcheck", "forward_ad"]


def __getattr__(name: str):
    """``torch.autograd.torch`` is torch (torch.autograd imports it; code reaches it so)."""
    if name == "torch":
        return sys.modules[__name__.rpartition(".")[0]]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
