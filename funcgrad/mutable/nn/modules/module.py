"""torch.nn.Module: the base class that registers parameters, buffers and submodules."""
from __future__ import annotations

from collections import OrderedDict, namedtuple
from typing import Any, Callable, Iterator

import numpy as np

from ... import _dtypes
from ..._functions import from_numpy
from ..._grad_mode import is_grad_enabled
from ..._tensor import Tensor
from ...autograd import Function
from ..parameter import Parameter

__all__ = ["Module"]


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class BackwardHookFunction(Function):
    """The identity on a module's tensor inputs or outputs: its node is where the module's
    full backward hooks see the gradients (``BackwardHookFunctionBackward``, as PyTorch)."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


class _BackwardHookState:
    """One call's full backward hooks: the gradients of the outputs, caught at the output
    node, handed to the hooks when the input node runs (or at once without inputs that
    require grad)."""

    def __init__(self, module: "Module", n_inputs: int) -> None:
        self.module = module
        self.n_inputs = n_inputs
        self.grad_output = None

    def outputs_ready(self, grad_outputs: tuple, call_now: bool):
        grads = tuple(grad_outputs)
        for hook in list(self.module._backward_pre_hooks.values()):
            changed = hook(self.module, grads)
            if changed is not None:
                grads = tuple(changed) if isinstance(changed, (tuple, list)) else (changed,)
        self.grad_output = grads
        if call_now:
            self.inputs_ready((None,) * self.n_inputs)
        return grads

    def inputs_ready(self, grad_inputs: tuple):
        if self.grad_output is None:
            # the gradient reached the inputs without passing through the outputs (a double
            # backward through the module's forward): PyTorch calls no hook then
            return None
        grads = tuple(grad_inputs)
        grad_output, self.grad_output = self.grad_output, None
        for hook in list(self.module._backward_hooks.values()):
            changed = hook(self.module, grads, grad_output)
            if changed is not None:
                grads = tuple(changed) if isinstance(changed, (tuple, list)) else (changed,)
        return grads


class RemovableHandle:
    """What ``register_forward_hook`` returns: ``remove()`` takes the hook away."""

    def __init__(self, hooks: dict, key: int) -> None:
        self.hooks, self.key = hooks, key

    def remove(self) -> None:
        self.hooks.pop(self.key, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.remove()


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    return lines[0] + "\n" + "\n".join(" " * spaces + line for line in lines[1:])


def _typename(value) -> str:
    if isinstance(value, Tensor):
        return {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor",
                "int64": "torch.LongTensor"}.get(value.dtype.name if hasattr(value.dtype, "name")
                                                  else "", "torch.Tensor")
    return type(value).__name__


def _overwrite(t: Tensor, src: Tensor) -> None:
    """``with torch.no_grad(): t.copy_(src)``: one version bump, allowed on leaves."""
    t.detach().copy_(src.detach())


class Module:
    """Base class of every layer: assigning a Parameter, a Module or (via
    ``register_buffer``) a tensor to an attribute registers it.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable import nn
    >>> class Affine(nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.scale = nn.Parameter(torch.tensor(2.0))
    ...     def forward(self, x):
    ...         return self.scale * x
    >>> m = Affine()
    >>> m(torch.tensor(3.0))
    tensor(6., grad_fn=<MulBackward0>)
    >>> [name for name, _ in m.named_parameters()]
    ['scale']
    """

    training: bool

    def __init__(self, *args, **kwargs) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument but "
                            f"{len(args) + 1} were given")
        set_ = object.__setattr__
        set_(self, "training", True)
        set_(self, "_parameters", OrderedDict())
        set_(self, "_buffers", OrderedDict())
        set_(self, "_non_persistent_buffers_set", set())
        set_(self, "_modules", OrderedDict())
        set_(self, "_forward_hooks", OrderedDict())
        set_(self, "_forward_pre_hooks", OrderedDict())
        set_(self, "_backward_hooks", OrderedDict())
        set_(self, "_backward_pre_hooks", OrderedDict())

    # --- calling ---------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  '"forward" function')

    def __call__(self, *args, **kwargs):
        for hook in list(self._forward_pre_hooks.values()):
            changed = hook(self, args)
            if changed is not None:
                args = changed if isinstance(changed, tuple) else (changed,)
        if (self._backward_hooks or self._backward_pre_hooks) and is_grad_enabled():
            out = self._call_with_backward_hooks(args, kwargs)
        else:
            out = self.forward(*args, **kwargs)
        for hook in list(self._forward_hooks.values()):
            changed = hook(self, args, out)
            if changed is not None:
                out = changed
        return out

    def _call_with_backward_hooks(self, args: tuple, kwargs: dict):
        """forward between two `BackwardHookFunction`s: on its tensor inputs (if one requires
        grad) and on its tensor outputs, whose nodes call the full backward hooks."""
        places = [k for k, a in enumerate(args) if isinstance(a, Tensor)]
        state = _BackwardHookState(self, len(places))
        inputs_hooked = any(args[k].requires_grad for k in places)
        if inputs_hooked:
            wrapped = BackwardHookFunction.apply(*[args[k] for k in places])
            args = list(args)
            for k, t in zip(places, wrapped):
                args[k] = t
            args = tuple(args)
            node = next(t.grad_fn for t in wrapped if t.grad_fn is not None)
            node.register_hook(lambda grad_inputs, _: state.inputs_ready(grad_inputs))
        out = self.forward(*args, **kwargs)
        single = isinstance(out, Tensor)
        outs = (out,) if single else out
        if not isinstance(outs, tuple):
            return out
        found = [k for k, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
        if not found:
            return out
        wrapped = BackwardHookFunction.apply(*[outs[k] for k in found])
        node = wrapped[0].grad_fn
        node.register_prehook(lambda grads: state.outputs_ready(grads, not inputs_hooked))
        outs = list(outs)
        for k, t in zip(found, wrapped):
            outs[k] = t
        return outs[0] if single else tuple(outs)

    def register_full_backward_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` when the gradients with respect to
        the module's inputs are computed; a returned tuple replaces ``grad_input``.

        >>> import funcgrad.mutable as torch
        >>> seen = []
        >>> lin = torch.nn.Linear(2, 1)
        >>> _ = lin.register_full_backward_hook(lambda m, gi, go: seen.append(go[0].shape))
        >>> lin(torch.ones(3, 2, requires_grad=True)).sum().backward(); seen
        [torch.Size([3, 1])]
        """
        key = id(hook) ^ len(self._backward_hooks)
        self._backward_hooks[key] = hook
        return RemovableHandle(self._backward_hooks, key)

    def register_full_backward_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients with respect to the module's
        outputs are computed; a returned tuple replaces ``grad_output``."""
        key = id(hook) ^ len(self._backward_pre_hooks)
        self._backward_pre_hooks[key] = hook
        return RemovableHandle(self._backward_pre_hooks, key)

    def register_forward_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after each forward."""
        key = id(hook) ^ len(self._forward_hooks)
        self._forward_hooks[key] = hook
        return RemovableHandle(self._forward_hooks, key)

    def register_forward_pre_hook(self, hook: Callable) -> RemovableHandle:
        """Call ``hook(module, args)`` before each forward."""
        key = id(hook) ^ len(self._forward_pre_hooks)
        self._forward_pre_hooks[key] = hook
        return RemovableHandle(self._forward_pre_hooks, key)

    # --- registration ----------------------------------------------------------------------
    def _check_name(self, name, kind: str) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Register `param` (or None) under `name`."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter")
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        self._parameters[name] = param

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register a tensor that is state but not a parameter (e.g. running statistics)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer")
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name: str, module: "Module | None") -> None:
        """Register a submodule under `name`."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        self._check_name(name, "module")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        self._modules[name] = module

    register_module = add_module

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            for store in (d, d["_buffers"], d["_modules"]):
                store.pop(name, None)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            params[name] = None
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            for store in (d, d["_parameters"], d["_buffers"]):
                store.pop(name, None)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = None
            return
        buffers = d.get("_buffers")
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(torch.Tensor or None expected)")
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        for store in (self._parameters, self._buffers, self._modules):
            if name in store:
                del store[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._parameters) | set(self._buffers)
                      | set(self._modules))

    # --- traversal -------------------------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, "Module"]]:
        """(name, module) for this module and every descendant, depth first."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if self in memo:
                return
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name,
                                            remove_duplicate)

    def modules(self) -> Iterator["Module"]:
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, "Module"]]:
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self) -> Iterator["Module"]:
        for _, module in self.named_children():
            yield module

    def _named_members(self, store: str, prefix: str, recurse: bool, remove_duplicate: bool):
        seen = set()
        modules = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for module_prefix, module in modules:
            for name, value in getattr(module, store).items():
                if value is None or (remove_duplicate and value in seen):
                    continue
                if remove_duplicate:
                    seen.add(value)
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter), in registration order, each parameter once."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target: str) -> "Module":
        """The submodule at dotted path `target` ("" is self)."""
        module = self
        for item in target.split(".") if target else ():
            if item not in module._modules:
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = module._modules[item]
        return module

    def get_parameter(self, target: str) -> Parameter:
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if name not in module._parameters:
            raise AttributeError(f"{module._get_name()} has no parameter `{name}`")
        return module._parameters[name]

    def apply(self, fn: Callable[["Module"], None]) -> "Module":
        """Call `fn` on every submodule (children first), then on self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # --- modes and gradients ---------------------------------------------------------------
    def train(self, mode: bool = True) -> "Module":
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> "Module":
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> "Module":
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's gradient: to None (default) or to zeros in place."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    # --- state -----------------------------------------------------------------------------
    def state_dict(self, *args, destination=None, prefix: str = "",
                   keep_vars: bool = False) -> "OrderedDict[str, Tensor]":
        """Parameters and persistent buffers by dotted name (detached unless `keep_vars`)."""
        if args:
            destination = args[0]
            prefix = args[1] if len(args) > 1 else prefix
            keep_vars = args[2] if len(args) > 2 else keep_vars
        if destination is None:
            destination = OrderedDict()
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        return destination

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy values from `state_dict` into parameters and buffers (in place).

        Returns ``(missing_keys, unexpected_keys)``; with ``strict=True`` any mismatch
        raises RuntimeError listing them all, as PyTorch.
        """
        if not isinstance(state_dict, dict):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, errors, expected = [], [], set()
        for module_prefix, module in self.named_modules():
            prefix = module_prefix + "." if module_prefix else ""
            own = [(n, p) for n, p in module._parameters.items() if p is not None]
            own += [(n, b) for n, b in module._buffers.items()
                    if b is not None and n not in module._non_persistent_buffers_set]
            for name, target in own:
                key = prefix + name
                expected.add(key)
                if key not in state_dict:
                    missing.append(key)
                    continue
                value = state_dict[key]
                if not isinstance(value, Tensor):
                    errors.append(f'While copying the parameter named "{key}", expected '
                                  f"torch.Tensor or Tensor-like object from checkpoint but "
                                  f"received {type(value)}")
                    continue
                if tuple(value.shape) != tuple(target.shape):
                    errors.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{value.shape} from checkpoint, the shape in current model "
                                  f"is {target.shape}.")
                    continue
                if assign:
                    if isinstance(target, Parameter):
                        setattr(module, name, Parameter(value.detach(), target.requires_grad))
                    else:
                        module._buffers[name] = value
                else:
                    _overwrite(target, value)
        unexpected = [k for k in state_dict if k not in expected]
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # --- dtype and device ------------------------------------------------------------------
    def _cast(self, dtype) -> "Module":
        for module in self.modules():
            for p in module._parameters.values():
                if p is not None and p.is_floating_point():
                    p.data = p.data.to(dtype)
            for name, b in module._buffers.items():
                if b is not None and b.is_floating_point():
                    module._buffers[name] = b.to(dtype)
        return self

    def to(self, *args, **kwargs) -> "Module":
        """``to(device)`` (CPU only) and/or ``to(dtype)``: floating parameters converted."""
        dtype = kwargs.get("dtype")
        for a in list(args) + [kwargs.get("device")]:
            if isinstance(a, _dtypes.dtype):
                dtype = a
            elif a is not None and not str(a).startswith("cpu"):
                raise RuntimeError(f"funcgrad.mutable runs on the CPU only; cannot move a "
                                   f"module to {a!r}")
        return self._cast(dtype) if dtype is not None else self

    def cpu(self) -> "Module":
        return self

    def float(self) -> "Module":
        return self._cast(_dtypes.float32)

    def double(self) -> "Module":
        return self._cast(_dtypes.float64)

    # --- printing --------------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def _get_name(self) -> str:
        return type(self).__name__

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"


def new_parameter(shape, dtype=None) -> Parameter:
    """An uninitialised Parameter of `shape` (the layers fill it from the random stream)."""
    dt = _dtypes.to_dtype(dtype) if dtype is not None else _dtypes.DEFAULT_FLOAT
    return Parameter(from_numpy(np.empty(tuple(shape), dt.np)))


def new_buffer(values, dtype=None) -> Tensor:
    dt = _dtypes.to_dtype(dtype) if dtype is not None else _dtypes.DEFAULT_FLOAT
    return from_numpy(np.array(values, dt.np))
