"""``torch.return_types``: the named tuples that max/min/sort/topk/... return along a dim."""
from __future__ import annotations

__all__ = ["max", "min", "sort", "topk", "median", "nanmedian", "kthvalue", "linalg_qr",
           "linalg_slogdet", "slogdet", "linalg_eigh", "triangular_solve", "qr", "linalg_svd", "svd"]


def _named(name: str, fields: tuple) -> type:
    """A tuple subclass printed as ``torch.return_types.<name>(\\nvalues=...,\\nindices=...)``."""
    def __new__(cls, *values):
        return tuple.__new__(cls, values)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(fields, self))
        return f"torch.return_types.{name}(\n{body})"

    ns = {"__new__": __new__, "__repr__": __repr__, "__slots__": (), "_fields": fields,
          "__reduce__": lambda self: (type(self), tuple(self))}
    for i, f in enumerate(fields):
        ns[f] = property(lambda self, i=i: self[i])
    cls = type(name, (tuple,), ns)
    cls.__module__ = "torch.return_types"
    return cls


max = _named("max", ("values", "indices"))  # noqa: A001
min = _named("min", ("values", "indices"))  # noqa: A001
sort = _named("sort", ("values", "indices"))
topk = _named("topk", ("values", "indices"))
median = _named("median", ("values", "indices"))
nanmedian = _named("nanmedian", ("values", "indices"))
kthvalue = _named("kthvalue", ("values", "indices"))
linalg_qr = _named("linalg_qr", ("Q", "R"))
linalg_slogdet = _named("linalg_slogdet", ("sign", "logabsdet"))
slogdet = _named("slogdet", ("sign", "logabsdet"))
linalg_eigh = _named("linalg_eigh", ("eigenvalues", "eigenvectors"))
triangular_solve = _named("triangular_solve", ("solution", "cloned_coefficient"))
qr = _named("qr", ("Q", "R"))
linalg_svd = _named("linalg_svd", ("U", "S", "Vh"))
svd = _named("svd", ("U", "S", "V"))
