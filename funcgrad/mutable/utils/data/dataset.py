"""Datasets: the map-style base class, TensorDataset, Subset, ConcatDataset, random_split."""
from __future__ import annotations

import bisect
import math
from typing import Sequence

from ... import _random
from ..._tensor import Tensor

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset",
           "random_split"]


class Dataset:
    """A map-style dataset: subclasses define ``__getitem__`` (and usually ``__len__``).

    >>> from funcgrad.mutable.utils.data import Dataset
    >>> class Squares(Dataset):
    ...     def __len__(self): return 3
    ...     def __getitem__(self, i): return i * i
    >>> [Squares()[i] for i in range(3)]
    [0, 1, 4]
    """

    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other: "Dataset") -> "ConcatDataset":
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A dataset read by iterating (``__iter__``) rather than by index."""

    def __iter__(self):
        raise NotImplementedError("Subclasses of IterableDataset should implement __iter__.")


class TensorDataset(Dataset):
    """Samples are the i-th rows of the given tensors (all of one first dimension).

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable.utils.data import TensorDataset
    >>> ds = TensorDataset(torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.tensor([0, 1]))
    >>> len(ds), ds[1]
    (2, (tensor([3., 4.]), tensor(1)))
    """

    def __init__(self, *tensors: Tensor) -> None:
        if any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0]


class Subset(Dataset):
    """The samples of `dataset` at `indices`.

    >>> from funcgrad.mutable.utils.data import Subset
    >>> Subset([10, 20, 30], [2, 0])[0]
    30
    """

    def __init__(self, dataset, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = indices

    def __getitem__(self, index):
        if isinstance(index, list):
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


class ConcatDataset(Dataset):
    """Datasets one after the other.

    >>> from funcgrad.mutable.utils.data import ConcatDataset
    >>> ds = ConcatDataset([[1, 2], [3]])
    >>> len(ds), ds[2]
    (3, 3)
    """

    def __init__(self, datasets) -> None:
        self.datasets = list(datasets)
        if not self.datasets:
            raise AssertionError("datasets should not be an empty iterable")
        self.cumulative_sizes, total = [], 0
        for d in self.datasets:
            total += len(d)
            self.cumulative_sizes.append(total)

    def __len__(self) -> int:
        return self.cumulative_sizes[-1]

    def __getitem__(self, index: int):
        if index < 0:
            if -index > len(self):
                raise ValueError("absolute value of index should not exceed dataset length")
            index += len(self)
        which = bisect.bisect_right(self.cumulative_sizes, index)
        start = self.cumulative_sizes[which - 1] if which else 0
        return self.datasets[which][index - start]


def random_split(dataset, lengths: Sequence, generator=None) -> list:
    """Split into non-overlapping Subsets of the given lengths (or fractions), drawn with
    ``randperm`` on torch's stream (pass ``generator=torch.Generator().manual_seed(s)`` to
    reproduce PyTorch's split).

    >>> from funcgrad.mutable.utils.data import random_split
    >>> from funcgrad.mutable._random import Generator
    >>> [list(s) for s in random_split(range(5), [3, 2], Generator().manual_seed(0))]
    [[4, 0, 1], [3, 2]]
    """
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        counts = [int(math.floor(n * frac)) for frac in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    order = _random.randperm(n, generator if generator is not None
                             else _random.default_generator).tolist()
    out, start = [], 0
    for length in lengths:
        out.append(Subset(dataset, order[start:start + length]))
        start += length
    return out
