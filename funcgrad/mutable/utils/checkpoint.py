"""torch.utils.checkpoint: run a function without keeping what its backward needs, and
compute it again during backward (the reentrant variant through a custom Function, the
non-reentrant one through saved-tensor hooks), with the random stream replayed."""
from __future__ import annotations

import contextlib
import itertools
import os
import threading
import traceback
import warnings
from typing import Any, Callable, Iterator

from .. import _random
from .._autograd import current_graph_task
from .._grad_mode import enable_grad, no_grad
from .._tensor import Tensor
from ..autograd import backward as autograd_backward
from ..autograd.function import Function
from ..autograd.graph import saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "set_checkpoint_early_stop",
           "set_checkpoint_debug_enabled", "GraphExecGroup"]


class CheckpointError(RuntimeError):
    """A non-reentrant checkpoint used in a way it cannot serve (torch's class)."""


class _StopRecomputation(Exception):
    """Raised by the recomputation's pack hook once every saved tensor is computed again."""


_EARLY_STOP: list = [None]  # set_checkpoint_early_stop's setting (process-wide, as torch's)


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    """Whether non-reentrant checkpoints made in the block stop their recomputation as soon
    as it has given back every tensor the first run saved (the default), overriding their
    `early_stop` argument. Only the forward needs to run in the block.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable.utils.checkpoint import checkpoint, set_checkpoint_early_stop
    >>> runs = []
    >>> def fn(x):
    ...     y = x.sin().cos()
    ...     runs.append(1)  # after the last saving op: not reached when stopping early
    ...     return y
    >>> x = torch.tensor(1.0, requires_grad=True)
    >>> with set_checkpoint_early_stop(False):
    ...     out = checkpoint(fn, x, use_reentrant=False)
    >>> out.backward(); len(runs)
    2
    """
    prev = _EARLY_STOP[0]
    _EARLY_STOP[0] = enable
    try:
        yield
    finally:
        _EARLY_STOP[0] = prev


_DEBUG: list = [None]  # set_checkpoint_debug_enabled's setting (None: each call's `debug`)


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled: bool | None) -> Iterator[None]:
    """Within: non-reentrant checkpoints made in the block run as with ``debug=True``
    (`enabled` True) or without (False) whatever their `debug` argument; None leaves it to
    the argument. Taken when checkpoint() is called, as torch's."""
    prev = _DEBUG[0]
    _DEBUG[0] = enabled
    try:
        yield
    finally:
        _DEBUG[0] = prev


class _Group(threading.local):
    current = None  # the GraphExecGroup this thread is in, if any


_GROUP = _Group()
_GROUP_IDS = itertools.count()


class GraphExecGroup:
    """Within: the backward calls (backward, autograd.grad) share one recomputation of
    each non-reentrant checkpoint they meet, instead of one each; they must then need
    different saved tensors (each is handed out once per group). Not nestable; per thread.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable.utils.checkpoint import checkpoint, GraphExecGroup
    >>> runs = []
    >>> def fn(x):
    ...     runs.append(1)
    ...     y = x.sin()
    ...     return y, y.exp()
    >>> x = torch.tensor(0.5, requires_grad=True)
    >>> y, z = checkpoint(fn, x, use_reentrant=False)
    >>> with GraphExecGroup():
    ...     (gy,) = torch.autograd.grad(z, y)
    ...     (gx,) = torch.autograd.grad(y, x, gy)
    >>> len(runs)  # the first run and one recomputation for both calls
    2
    """

    def __init__(self) -> None:
        self._id = next(_GROUP_IDS)

    def __enter__(self) -> "GraphExecGroup":
        if _GROUP.current is not None:
            raise RuntimeError("GraphExecGroup contexts cannot be nested. Already inside group "
                               f"{_GROUP.current}")
        _GROUP.current = self
        return self

    def __exit__(self, *exc) -> None:
        _GROUP.current = None

    @classmethod
    def _get_current_group(cls) -> "GraphExecGroup | None":
        return _GROUP.current


USE_REENTRANT_WARNING = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. Starting "
    "in PyTorch 2.9, calling checkpoint without use_reentrant will raise an exception. "
    "use_reentrant=False is recommended, but if you need to preserve the current default "
    "behavior, you can pass use_reentrant=True. Refer to docs for more details on the "
    "differences between the two variants.")


def _rng_state() -> tuple:
    g = _random.default_generator
    return g.bits.state, g.seed, g.cached_normal


def _set_rng_state(state: tuple) -> None:
    g = _random.default_generator
    g.bits.state, g.seed, g.cached_normal = state


class _Replay:
    """Run `fn` again with the random stream as it was at the first run (if kept), and give
    the stream back as it is now."""

    def __init__(self, preserve_rng_state: bool) -> None:
        self.state = _rng_state() if preserve_rng_state else None

    def __call__(self, fn: Callable, args: tuple, kwargs: dict):
        if self.state is None:
            return fn(*args, **kwargs)
        now = _rng_state()
        _set_rng_state(self.state)
        try:
            return fn(*args, **kwargs)
        finally:
            _set_rng_state(now)


class CheckpointFunction(Function):
    """The reentrant checkpoint: forward without a graph, backward runs the function again
    with grad on and a backward pass of its own."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        ctx.run_function = run_function
        ctx.replay = _Replay(preserve_rng_state)
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [k for k, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*(a for a in args if isinstance(a, Tensor)))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        task = current_graph_task()
        if task is not None and task.partial:
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
                "passing an `inputs` parameter to .backward(). To resolve this error, you can "
                "either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument.")
        inputs = list(ctx.inputs)
        for k, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[k] = t.detach().requires_grad_(t.requires_grad)
        with enable_grad():
            outputs = ctx.replay(ctx.run_function, tuple(inputs), {})
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is not "
                               "necessary")
        autograd_backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(t.grad if isinstance(t, Tensor) else None for t in inputs)


def _checkpoint_without_reentrant(fn: Callable, preserve_rng_state: bool, args: tuple,
                                  kwargs: dict, check: bool = True, early_stop: bool = True,
                                  debug: bool = False):
    """Each tensor saved inside `fn` is packed as its position in the order of saving. The
    first unpack in a backward pass (or each unpack outside one) runs `fn` again (grad on,
    same random stream) and keeps what that run saves: detached where it requires grad, else
    the very tensor; with `early_stop` the run stops once it has saved as many as the first
    (the rest of `fn` does not run), else saving more is an error. Within one pass each value
    is handed out once, as in PyTorch. With `debug`, where each tensor was saved (in both
    runs) is kept, and a mismatch between the runs reports it."""
    replay = _Replay(preserve_rng_state)
    # the number of the backward pass that ran `fn` last (not the pass itself: it holds its
    # graph, whose saved records hold `unpack`, a cycle that would keep the graph alive),
    # what is left of that run, and whether the first run has returned (a backward inside
    # `fn` may recompute before it has: what it saves beyond the first run's is not compared)
    run = {"task": None, "values": {}, "done": False}
    saved: list = []  # per tensor saved by the first run, in order: its metadata
    log = _SaveLog() if debug else None

    def pack(tensor: Tensor) -> int:
        saved.append(_metadata(tensor))
        if log is not None:
            log.note(log.first, tensor)
        return len(saved) - 1

    def recompute() -> dict:
        values: dict = {}

        extra = [0]  # saved beyond the first run's count

        def keep(t: Tensor) -> Tensor:
            if log is not None:
                log.note(log.again, t)
            t = t.detach() if t.requires_grad else t
            if len(values) == len(saved):  # (only without early stop)
                if not run["done"]:
                    extra[0] += 1
                    return t
                raise CheckpointError(
                    "torch.utils.checkpoint: trying to save more tensors during recomputation "
                    "than during the original forward pass." + _NON_DETERMINISM_TIP)
            values[len(values)] = t
            if early_stop and len(values) == len(saved):
                raise _StopRecomputation
            return t  # (read back as is by a backward inside `fn`)

        if log is not None:
            log.again = []
        try:
            try:
                with saved_tensors_hooks(keep, lambda t: t), enable_grad():
                    replay(fn, args, kwargs)
            except _StopRecomputation:
                pass
            if check and not extra[0]:
                _check_same_saves(saved, values)
        except CheckpointError as error:
            if log is None:
                raise
            raise CheckpointError(log.report(error)) from None
        return values

    def unpack(position: int) -> Tensor:
        group = _GROUP.current
        task = current_graph_task()
        if group is not None:  # one recomputation for every backward call of the group
            key = ("group", group._id)
        else:
            key = None if task is None else task.id
        if key is None or key != run["task"]:
            run["task"], run["values"] = key, recompute()
        values = run["values"]
        if position not in values:
            overlap = ("" if group is None else
                       "Performing two backward calls that overlap (that need the same saved "
                       "tensor) is not supported within one torch.utils.checkpoint."
                       "GraphExecGroup: each saved tensor is handed out once per group. ")
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                f"already unpacked once. {overlap}If you are calling ctx.saved_tensors in "
                "backward, make sure to do so only once. Otherwise please open an issue with "
                "details on your use case.")
        return values.pop(position)

    with saved_tensors_hooks(pack, unpack):
        out = fn(*args, **kwargs)
    run["done"] = True
    return out


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _SaveLog:
    """checkpoint's debug record: each tensor saved by the first run (`first`) and by the
    latest recomputation (`again`), with the caller's frames (funcgrad's own left out) at
    the moment it was saved: enough to find the line where the two runs part."""

    def __init__(self) -> None:
        self.first: list = []
        self.again: list = []

    @staticmethod
    def note(into: list, t: Tensor) -> None:
        frames = [f for f in traceback.extract_stack()[:-2]
                  if not os.path.abspath(f.filename).startswith(_PACKAGE)]
        into.append((_describe(t), "".join(traceback.format_list(frames[-4:]))))

    def report(self, error: CheckpointError) -> str:
        def listing(title: str, entries: list) -> str:
            lines = [f"{title} ({len(entries)}):"]
            for k, (what, where) in enumerate(entries):
                lines.append(f"  #{k}: {what}, saved at\n{where}".rstrip("\n"))
            return "\n".join(lines)
        reason = str(error).split(_NON_DETERMINISM_TIP)[0]
        return ("torch.utils.checkpoint (debug): the recomputation did not save the tensors the "
                "original forward saved.\n\n"
                + listing("Tensors saved during the original forward", self.first) + "\n\n"
                + listing("Tensors saved during the recomputation", self.again) + "\n\n"
                "ERROR: " + reason + "\n\n"
                "You are seeing this error because you passed `debug=True` to checkpoint (or "
                "enabled set_checkpoint_debug_enabled): above, each saved tensor's shape and "
                "dtype and the frames that saved it, in both runs. The first place where the "
                "two lists differ is where the function stopped computing the same thing "
                "(it reads state that changed, or draws random numbers without "
                "preserve_rng_state).")


def _describe(t: Tensor) -> str:
    return f"{t.dtype} {list(t.shape)}"


def _metadata(t: Tensor) -> dict:
    return {"shape": t.shape, "dtype": t.dtype, "device": t.device}


# A function that saves other tensors when run again (it branches on state, or draws random
# numbers without preserve_rng_state) would get gradients from values it never computed:
# the recomputation is checked against the first run, as torch's default determinism check.
_NON_DETERMINISM_TIP = (
    "\n\nTip: the function given to checkpoint must save the same tensors (number, shape, "
    "dtype, device) each time it runs: make it deterministic, or keep its activations "
    "by calling it without checkpoint. Pass `debug=True` to checkpoint (or run it within "
    "torch.utils.checkpoint.set_checkpoint_debug_enabled(True)) to see where each run saved "
    "its tensors.")


def _check_same_saves(saved: list, values: dict) -> None:
    """Raise torch's CheckpointError if the recomputation saved other tensors than the first
    run: fewer (more are never read, as with torch's early stop) or of other metadata."""
    if len(values) < len(saved):
        raise CheckpointError(
            "torch.utils.checkpoint: A different number of tensors was saved during the "
            "original forward and recomputation.\n"
            f"Number of tensors saved during forward: {len(saved)}\n"
            f"Number of tensors saved during recomputation: {len(values)}."
            + _NON_DETERMINISM_TIP)
    wrong = [k for k, meta in enumerate(saved) if _metadata(values[k]) != meta]
    if wrong:
        lines = "".join(f"tensor at position {k}:\nsaved metadata: {saved[k]}\n"
                        f"recomputed metadata: {_metadata(values[k])}\n" for k in wrong)
        raise CheckpointError(
            "torch.utils.checkpoint: Recomputed values for the following tensors have "
            f"different metadata than during the forward pass.\n{lines}."
            + _NON_DETERMINISM_TIP)


def checkpoint(function: Callable, *args, use_reentrant: bool | None = None,
               context_fn: Callable | None = None, determinism_check: str = "default",
               debug: bool = False, preserve_rng_state: bool = True, early_stop: bool = True,
               **kwargs) -> Any:
    """``torch.utils.checkpoint.checkpoint``: `function(*args, **kwargs)` whose intermediate
    values are not kept for backward but computed again when backward needs them. Pass
    `use_reentrant` (False is recommended, as in PyTorch; leaving it out warns and uses True).

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable.utils.checkpoint import checkpoint
    >>> x = torch.tensor([0.0, 1.0], requires_grad=True)
    >>> checkpoint(torch.exp, x, use_reentrant=False).sum().backward()
    >>> x.grad
    tensor([1.0000, 2.7183])
    """
    if use_reentrant is None:
        warnings.warn(USE_REENTRANT_WARNING, UserWarning, stacklevel=2)
        use_reentrant = True
    if use_reentrant:
        if context_fn is not None or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        return CheckpointFunction.apply(function, preserve_rng_state, *args)
    if determinism_check not in ("default", "none"):
        raise ValueError("determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    if _EARLY_STOP[0] is not None:
        early_stop = _EARLY_STOP[0]
    if _DEBUG[0] is not None:
        debug = _DEBUG[0]
    return _checkpoint_without_reentrant(function, preserve_rng_state, args, kwargs,
                                         check=determinism_check == "default",
                                         early_stop=bool(early_stop), debug=bool(debug))


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None,
                          **kwargs) -> Any:
    """Run `functions` (modules or a Sequential) in order, checkpointing `segments` runs of
    them (the last run is not checkpointed, as in PyTorch).

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable.utils.checkpoint import checkpoint_sequential
    >>> x = torch.tensor([1.0, 2.0], requires_grad=True)
    >>> out = checkpoint_sequential([torch.exp, torch.sin], 2, x, use_reentrant=False)
    >>> out.sum().backward(); x.grad.shape
    torch.Size([2])
    """
    if use_reentrant is None:
        warnings.warn(USE_REENTRANT_WARNING, UserWarning, stacklevel=2)
        use_reentrant = True
    functions = list(functions.children()) if hasattr(functions, "children") else list(functions)

    def run(start: int, end: int) -> Callable:
        def forward(value):
            for k in range(start, end + 1):
                value = functions[k](value)
            return value
        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant, **kwargs)
    return run(end + 1, len(functions) - 1)(input)
