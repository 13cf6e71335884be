"""torch.autograd.function: custom differentiable functions (Function, its ctx,
once_differentiable, InplaceFunction)."""
from __future__ import annotations

import functools
import inspect
import warnings
import weakref

import numpy as np

from ...numpy import _primitives as NP
from .._graph import STATE, Node, Saved, freed_error, node_class, version_error
from .. import _forward
from .._ops import FORWARD, SavedTensor, _attach_inplace, check_inplace, edge_of, saved_tensor
from .._tensor import Tensor, _ViewInfo, is_traced

__all__ = ["Function", "FunctionCtx", "InplaceFunction", "once_differentiable", "BackwardCFunction"]


# --- custom functions -------------------------------------------------------------------------------
class FunctionCtx:
    """The ``ctx`` of a custom Function: save_for_backward, mark_dirty, needs_input_grad..."""

    def __init__(self) -> None:
        self._saved = None
        self._dirty = ()
        self._non_diff = ()
        self.needs_input_grad = ()
        self._freed = False
        self.materialize_grads = True
        self._materialize_non_diff_grads = True
        self._saved_forward = None
        self._in_jvp = False

    def save_for_backward(self, *tensors) -> None:
        for k, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {k} "
                                f"is of type {type(t).__name__}")
        self._saved = tensors

    def save_for_forward(self, *tensors) -> None:
        """Keep tensors for ``jvp`` (forward mode), where ``ctx.saved_tensors`` gives them."""
        for t in tensors:
            if t is not None and not isinstance(t, Tensor):
                raise AssertionError("save_for_forward expects all arguments to be tensors; "
                                     "you should save non-tensors as attributes on ctx.")
        self._saved_forward = tensors

    def mark_dirty(self, *tensors) -> None:
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors) -> None:
        self._non_diff = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = value

    @property
    def saved_variables(self) -> tuple:
        """The deprecated name of `saved_tensors`."""
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning,
                      stacklevel=2)
        return self.saved_tensors

    @property
    def saved_tensors(self) -> tuple:
        if self._in_jvp:  # in jvp: what save_for_forward kept (primals: no tangents)
            return tuple(self._saved_forward or ())
        if self._freed:
            if self._freed == "on access":
                raise RuntimeError(
                    "saved_tensors can only be accessed once when clear_saved_tensors_on_access=True "
                    "is set on the autograd.Function. Either access saved_tensors only once, or set "
                    "clear_saved_tensors_on_access=False.")
            raise freed_error()
        if self._saved is None:
            return ()
        node = self._node() if getattr(self, "_node", None) is not None else None
        clear = node is not None and getattr(node._fn_cls, "clear_saved_tensors_on_access", False)
        out = []
        for item in self._saved:
            if item is None:
                out.append(None)
                continue
            t, version, is_output = item
            if type(t) is Saved:  # an output (kept without a reference to itself), or packed
                if t.counter.value != version:
                    raise version_error(t, self._node())
                out.append(saved_tensor(t, self._node()))
                continue
            if t._vc.value != version:
                node = self._node()
                s = (Saved(t._data, t._vc, None, weakref.ref(node)) if is_output
                     else Saved(t._data, t._vc, t))
                s.version = version
                raise version_error(s, node)
            out.append(t)
        if clear:  # the backward holds the only references from here on
            self._saved = None
            self._freed = "on access"
        return tuple(out)


class _FunctionNode(Node):
    # `_needs`: which inputs get a gradient (kept apart from `_next`: CopySlices drops the
    # edge of an input written in place but still reads its gradient)
    __slots__ = ("_nout", "ctx", "_fn_cls", "_in_meta", "_out_meta", "_non_diff_outputs", "_needs")

    def _release(self) -> None:
        self.ctx._freed = True  # as PyTorch: saved_tensors is gone after backward, saved or not

    @property
    def saved_tensors(self) -> tuple:
        """PyTorch's node is the ctx: what ``ctx.save_for_backward`` saved."""
        return self.ctx.saved_tensors

    @property
    def _raw_saved_tensors(self) -> tuple:
        """What ``ctx.save_for_backward`` saved as PyTorch's SavedTensor objects (hooks can be
        registered on each); an input saved as itself becomes a `Saved` record first."""
        ctx = self.ctx
        if ctx._freed:
            raise freed_error()
        if not ctx._saved:
            return ()
        items, raw = [], []
        for item in ctx._saved:
            if item is not None and type(item[0]) is not Saved:
                item = (_saved_input(item[0], item[1]),) + item[1:]
            items.append(item)
            raw.append(SavedTensor._of(None if item is None else item[0], self))
        ctx._saved = tuple(items)
        return tuple(raw)

    def __getattr__(self, name: str):
        """Other attributes the forward set on ``ctx`` (PyTorch's node is the ctx)."""
        if name.startswith("__") or name in _FunctionNode.__slots__:
            raise AttributeError(name)
        try:
            return getattr(self.ctx, name)
        except AttributeError:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute "
                                 f"'{name}'") from None

    def _output_specs(self) -> list:
        return [meta for meta in self._out_meta if meta[1] is not None]

    def _saved_values(self) -> list:
        ctx = self.ctx
        if ctx._freed or not ctx._saved:
            return []
        found = []
        for k, item in enumerate(ctx._saved):
            if item is not None:
                t, version, is_output = item
                if type(t) is Saved:
                    found.append((f"saved{k}", None, t))
                    continue
                saved = object.__new__(Saved)  # a record of the save, watched by no policy
                saved.data, saved.counter, saved.version = t._data, t._vc, version
                saved.tensor, saved.output_node, saved.fallback = t, None, None
                found.append((f"saved{k}", None, saved))
        return found

    def _apply(self, cts, graph):
        ctx = self.ctx
        if ctx.materialize_grads:
            skip = () if ctx._materialize_non_diff_grads else self._non_diff_outputs
            cts = [np.zeros(shape, dtype) if c is None and k not in skip and dtype is not None
                   else c for k, (c, (shape, dtype)) in enumerate(zip(cts, self._out_meta))]
        args = [c if c is None or isinstance(c, Tensor) else Tensor._wrap(np.asarray(c)) for c in cts]
        prev = STATE.grad_enabled
        STATE.grad_enabled = graph.create_graph
        try:
            result = _user_backward(self._fn_cls)(ctx, *args)
        finally:
            STATE.grad_enabled = prev
        if not isinstance(result, tuple):
            result = (result,)
        n_in = len(self._in_meta)
        if len(result) != n_in:
            if len(result) > n_in and all(r is None for r in result[n_in:]):
                result = result[:n_in]
            else:
                raise RuntimeError(f"function {type(self).__name__} returned an incorrect number "
                                   f"of gradients (expected {n_in}, got {len(result)})")
        grads = []
        for r, needed, meta in zip(result, self._needs, self._in_meta):
            if not needed or r is None:
                grads.append(None)
                continue
            if not isinstance(r, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(r).__name__})")
            if tuple(r.shape) != tuple(meta[0]):
                raise RuntimeError(f"Function {type(self).__name__} returned an invalid gradient "
                                   f"at index {len(grads)} - got {list(r.shape)} but expected "
                                   f"shape compatible with {list(meta[0])}")
            grads.append(r if graph.create_graph else r._data)
        return grads


BackwardCFunction = _FunctionNode  # PyTorch's name for the class of a custom Function's node


def _user_backward(cls):
    """The Function's backward: its ``vjp`` or its ``backward``, never both (as PyTorch)."""
    backward, vjp = cls.backward, cls.vjp
    own_vjp = getattr(vjp, "__func__", vjp) is not getattr(Function.vjp, "__func__", None)
    if backward is not Function.backward and own_vjp:
        raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is not "
                           "allowed. You should only implement one of them.")
    return vjp if own_vjp else backward


class _FunctionMeta(type):
    """Gives every Function subclass its node class, ``_backward_cls`` (as PyTorch)."""

    def __init__(cls, name, bases, namespace) -> None:
        super().__init__(name, bases, namespace)
        cls._backward_cls = node_class(name + "Backward", _FunctionNode)


class Function(metaclass=_FunctionMeta):
    """Base class of custom differentiable functions (``forward``/``backward`` staticmethods).

    >>> import funcgrad.mutable as torch
    >>> class Square(torch.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         ctx.save_for_backward(x)
    ...         return x * x
    ...     @staticmethod
    ...     def backward(ctx, g):
    ...         (x,) = ctx.saved_tensors
    ...         return 2 * x * g
    >>> x = torch.tensor(3.0, requires_grad=True)
    >>> y = Square.apply(x)
    >>> y.backward(); y.grad_fn.name(), x.grad
    ('SquareBackward', tensor(6.))
    """

    # torch.func: no automatic vmap rule; a Function may define its own `vmap`
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        """A custom batching rule; PyTorch's default refuses."""
        raise NotImplementedError("To use autograd.Function with vmap, you must either override "
                                  "the vmap staticmethod or set generate_vmap_rule=True.")

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for your "
                                  "custom autograd.Function to use it with backward mode AD.")

    @staticmethod
    def setup_context(ctx, inputs: tuple, output) -> None:
        """Save what backward needs, given forward's inputs and output (then ``forward``
        takes no ctx)."""
        raise NotImplementedError("setup_context is not implemented.")

    @classmethod
    def vjp(cls, ctx, *grad_outputs):
        return cls.backward(ctx, *grad_outputs)

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """Forward mode: the outputs' tangents given the inputs' (``ctx.saved_tensors`` holds
        what forward passed to ``ctx.save_for_forward``)."""
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    def __init__(self, *args, **kwargs) -> None:
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd "
                      "functions are all static, so you should invoke them on the class itself. "
                      "Instantiating an autograd function will raise an error in a future "
                      "version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    @classmethod
    def apply(cls, *args, **kwargs):
        duals = _forward.duals_in(args)
        if not duals or not FORWARD.enabled:
            return cls._apply_function(args, kwargs)[0]
        # forward mode: forward runs on the primals (no tangent flows through its ops), then
        # jvp maps the inputs' tangents (zeros for tensors without one) to the outputs'
        if getattr(cls.jvp, "__func__", cls.jvp) is getattr(Function.jvp, "__func__", None):
            raise NotImplementedError("You must implement the jvp function for custom "
                                      "autograd.Function to use it with forward mode AD.")
        real = [_forward.tangent_of(a) if isinstance(a, Tensor) else None for a in args]
        tangents = [t if t is not None or not isinstance(a, Tensor) else _forward.zeros_tangent(a)
                    for a, t in zip(args, real)]
        # the checks of a dirty input's tangent compare its version before and after jvp
        versions = [None if t is None else t._vc.value for t in tangents]
        with _forward.Unmarked(duals, hidden=True):
            result, ctx, dirty, non_diff = cls._apply_function(args, kwargs)
            ctx._in_jvp = True
            try:
                got = cls.jvp(ctx, *tangents)
            finally:
                ctx._in_jvp = False
            outs = result if isinstance(result, tuple) else (result,)
            got = got if isinstance(got, tuple) else (got,)
            if len(got) != len(outs):
                raise RuntimeError(f"Function's jvp returned an invalid number of forward "
                                   f"gradients (expected {len(outs)} but got {len(got)})")
            for k, (o, t) in enumerate(zip(outs, got)):
                if t is None:
                    continue
                if (not isinstance(o, Tensor) or id(o) in non_diff
                        or not (o._dtype.is_floating_point or o._dtype.is_complex)):
                    raise RuntimeError(f"Function's jvp returned a gradient at position {k}, but "
                                       " the corresponding forward output is not a "
                                       "differentiable Tensor.You should return None at that "
                                       "position instead.")
                _forward.set_custom_tangent(o, t, args, real, versions, id(o) in dirty)
        return result

    @classmethod
    def _apply_function(cls, args, kwargs):
        """`apply` without forward mode: (the outputs, ctx, ids of the tensors marked dirty,
        ids of those marked non-differentiable)."""
        if any(isinstance(a, Tensor) and is_traced(a) for a in args):
            # under torch.autograd.functional: forward's ops would be differentiated, not
            # the Function's own backward (a straight-through estimator would silently lose)
            raise RuntimeError(f"{cls.__name__}: a custom autograd.Function is not yet "
                               "supported inside torch.autograd.functional (its backward would "
                               "be bypassed); compute the Jacobian with torch.autograd.grad on "
                               "the graph instead")
        if cls.setup_context is not Function.setup_context:
            # forward's defaults are filled in, so setup_context sees every input (PyTorch's)
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        ctx = FunctionCtx()
        tensors = [a for a in args if isinstance(a, Tensor)]
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        prev = STATE.grad_enabled
        STATE.grad_enabled = False
        try:
            if cls.setup_context is not Function.setup_context:
                outputs = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, outputs)
            else:
                outputs = cls.forward(ctx, *args, **kwargs)
        finally:
            STATE.grad_enabled = prev
        dirty_ids = {id(t) for t in ctx._dirty}
        non_diff_ids = {id(t) for t in ctx._non_diff}
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        rg = prev and any(ctx.needs_input_grad)
        if ctx._saved is not None:
            # outputs new to this Function, or inputs it wrote (the others come back as
            # aliases: what was saved is the input)
            in_ids = {id(a) for a in tensors}
            out_ids = {id(o) for o in outs if isinstance(o, Tensor)
                       and (id(o) not in in_ids or any(o is d for d in ctx._dirty))}
            ctx._saved = tuple(None if t is None else (t, t._vc.value, id(t) in out_ids)
                               for t in ctx._saved)
        if not rg:
            outs = tuple(_undifferentiated(o, tensors, dirty_ids) for o in outs)
            for o in outs:  # views of inputs keep their origin for the in-place checks
                if isinstance(o, Tensor) and o._base is not None and any(
                        o._base is (a._base if a._base is not None else a) for a in tensors):
                    o._view.custom = True
            return outs[0] if single else outs, ctx, dirty_ids, non_diff_ids
        cls_node = cls._backward_cls
        node = cls_node.__new__(cls_node)
        node._init(tuple(edge_of(a) if isinstance(a, Tensor) and a.requires_grad else None
                         for a in args))
        node._nout = len(outs)
        node._needs = tuple(e is not None for e in node._next)
        node.ctx = ctx
        ctx._node = weakref.ref(node)  # node -> ctx is strong; no cycle back
        node._fn_cls = cls
        node._in_meta = tuple((a._data.shape, a._data.dtype) if isinstance(a, Tensor) else ((), None)
                              for a in args)
        node._out_meta = tuple((o._data.shape, o._data.dtype) if isinstance(o, Tensor) else ((), None)
                               for o in outs)
        non_diff = {id(t) for t in ctx._non_diff}
        node._non_diff_outputs = frozenset(k for k, o in enumerate(outs) if id(o) in non_diff)
        dirty = {id(t) for t in ctx._dirty}
        if dirty - {id(o) for o in outs}:
            raise RuntimeError("Some elements marked as dirty during the forward method were not "
                               "returned as output. The inputs that are modified inplace must "
                               "all be outputs of the Function.")
        _check_dirty(ctx._dirty, tensors, len(outs))
        new_outs = []
        for k, o in enumerate(outs):
            if not isinstance(o, Tensor):
                new_outs.append(o)
                continue
            if id(o) in non_diff:
                new_outs.append(_undifferentiated(o, tensors, dirty))
                continue
            if id(o) in dirty:
                if o._base is None and o._grad_fn is None and o._rg:
                    raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                       "in-place operation.")
                o._vc.value += 1
                if o._base is not None and args and o is args[0] and len(outs) == 1:
                    # a view written in place: its base's history goes through CopySlices
                    _attach_inplace(o, node)
                else:
                    o._grad_fn, o._nr, o._rg = node, k, True
                new_outs.append(o)
                continue
            if any(o is a for a in tensors) or o._base is not None:
                o = _output_view(o, tensors, sum(isinstance(x, Tensor) for x in outs) > 1)
            o._grad_fn = node
            o._nr = k
            o._rg = True
            new_outs.append(o)
        ctx._dirty = ctx._non_diff = ()  # read: kept no longer (they may be outputs: cycles)
        if ctx._saved is not None:
            # a saved output is kept as its data and version, not as the tensor (whose
            # grad_fn is this node: a cycle), and unpacked with this node as its grad_fn;
            # ctx lets go of the tensors first, so a pack hook that raises (a checkpoint
            # stopping its recomputation early) leaves no output -> node -> ctx -> output cycle
            saved, ctx._saved = ctx._saved, None
            ctx._saved = tuple(
                item if item is None or not (item[2] or STATE.saved_hooks) else
                (_saved_output(item[0], item[1], node) if item[2]
                 else _saved_input(item[0], item[1]), item[1], item[2])
                for item in saved)
        return new_outs[0] if single else tuple(new_outs), ctx, dirty_ids, non_diff_ids


def _undifferentiated(o, inputs: list, dirty_ids) -> object:
    """An output without history, as PyTorch gives it: an input handed back unmodified is
    never the input object itself but a detached alias of it (when it requires grad: grad
    mode was off) or a view of it (so forward mode can check its tangent is a view too)."""
    if (not isinstance(o, Tensor) or id(o) in dirty_ids
            or not any(o is a for a in inputs)):
        return o
    if o.requires_grad:
        return o.detach()
    prev = STATE.grad_enabled
    STATE.grad_enabled = False
    try:
        return o.view_as(o)
    finally:
        STATE.grad_enabled = prev


def _saved_input(t: Tensor, version: int) -> Saved:
    """An input saved while saved-tensor hooks are active: packed by them (`Saved`)."""
    saved = Saved(t._data, t._vc, t)
    saved.version = version
    return saved


def _saved_output(t: Tensor, version: int, node: Node) -> Saved:
    saved = Saved(t._data, t._vc, None, weakref.ref(node))
    saved.version = version
    return saved


_NOT_AN_INPUT = ("ctx.mark_dirty() received a tensor that was not an input. Only input Tensors "
                 "that have been mutated should be passed to ctx.mark_dirty().")


def _check_dirty(dirty, inputs: list, n_outputs: int) -> None:
    """PyTorch's rules for tensors marked dirty: inputs only (a new tensor warns, a new view
    is refused), views that may be written in place, and one output beside such a view."""
    for t in dirty:
        if not any(t is a for a in inputs):
            if t._base is not None:
                raise RuntimeError(_NOT_AN_INPUT)
            warnings.warn(_NOT_AN_INPUT, UserWarning, stacklevel=3)
            continue
        if t._base is not None:
            check_inplace(t)
            if n_outputs > 1:
                raise RuntimeError(
                    "If your Function modifies inplace an input that is a view of another "
                    "Tensor, your Function cannot return more than one Tensor. This is not "
                    "supported by the current autograd engine. You should either make sure the "
                    "input is not a view (using .clone() for example) or make your Function "
                    "only return one Tensor (potentially splitting it into two Functions: one "
                    "doing the inplace that returns a single Tensor and a second one that does "
                    "the other operations). You can ask on the forum "
                    "https://discuss.pytorch.org/ if you need help to do this change.")


def _alias(t: Tensor) -> Tensor:
    out = Tensor._wrap(t._data)
    out._vc = t._vc
    return out


_WHOLE = ((NP.getitem.impl, {"template": (Ellipsis,)}, None),)  # the view chain of an alias


def _output_view(t: Tensor, inputs: list, multi: bool) -> Tensor:
    """An output that is an input, or a view of one: a view of that input that may not be
    modified in place (PyTorch forbids it: view+inplace would bypass the custom backward).
    Among several tensor outputs it is one of "multiple views", as PyTorch words it."""
    out = _alias(t)
    base = t._base if t._base is not None else t
    out._base = base  # (a view of a value made inside forward is one too, as in PyTorch)
    chain = t._view.chain if t._base is not None else _WHOLE
    out._view = _ViewInfo(chain, t._vc.value, False, multi or (t._base is not None and t._view.multi))
    out._view.custom = not out._view.multi
    return out


class InplaceFunction(Function):
    """A Function that may work in place (``self.inplace``), as ``torch.autograd.function``'s.

    >>> import funcgrad.mutable as torch
    >>> torch.autograd.function.InplaceFunction(inplace=True).inplace
    True
    """

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


ONCE_MESSAGE = "trying to differentiate twice a function that was marked with @once_differentiable"


class _DelayedError(Node):
    """PyTorch's ``Error`` node: gradients computed by a once_differentiable backward carry it,
    so differentiating them again fails with a clear message."""

    __slots__ = ("_nout",)
    _display = "Error"

    def _apply(self, cts, graph):
        raise RuntimeError(ONCE_MESSAGE)


_ERROR_CLS = node_class("Error", _DelayedError, nout=1)


def once_differentiable(backward):
    """Mark a custom backward as not differentiable: it runs without recording, and its
    results refuse a second differentiation (with create_graph) instead of being silently
    constant.

    >>> import funcgrad.mutable as torch
    >>> callable(torch.autograd.function.once_differentiable(lambda ctx, g: g))
    True
    """
    @functools.wraps(backward)
    def wrapper(ctx, *args):
        prev = STATE.grad_enabled
        STATE.grad_enabled = False
        try:
            outputs = backward(ctx, *args)
        finally:
            STATE.grad_enabled = prev
        if not prev:
            return outputs
        requires_grad = any(isinstance(a, Tensor) and a.requires_grad for a in args)
        if not requires_grad:
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        node = _ERROR_CLS.__new__(_ERROR_CLS)
        fakes = []
        for o in outs:
            if isinstance(o, Tensor):
                leaf = Tensor._wrap(o._data)
                leaf._rg = True
                fakes.append(leaf)
            else:
                fakes.append(None)
        node._init(tuple((f._accumulator(), 0) if f is not None else None for f in fakes))
        node._nout = len(outs)
        result = []
        for k, o in enumerate(outs):
            if isinstance(o, Tensor):
                o = Tensor._wrap(o._data)
                o._grad_fn, o._nr, o._rg = node, k, True
            result.append(o)
        return result[0] if single else tuple(result)
    return wrapper
