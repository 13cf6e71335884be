"""DataLoader and default_collate: batches of samples stacked into tensors."""
from __future__ import annotations

import collections.abc
import numbers
from typing import Any, Callable, Iterator

import numpy as np

from ... import _functions as T
from ... import _random
from ..._tensor import Tensor
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate"]


def default_collate(batch: list) -> Any:
    """Stack a list of samples: tensors stack on a new first dimension, numbers become a
    tensor, tuples/lists/dicts are collated field by field.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable.utils.data import default_collate
    >>> default_collate([(torch.tensor([1.0]), 0), (torch.tensor([2.0]), 1)])
    [tensor([[1.],
            [2.]]), tensor([0, 1])]
    """
    first = batch[0]
    if isinstance(first, Tensor):
        return T.stack(list(batch), 0)
    if isinstance(first, np.ndarray):
        return T.stack([T.as_tensor(b) for b in batch], 0)
    if isinstance(first, (bool, np.bool_)):
        return T.tensor(batch)
    if isinstance(first, float):
        return T.tensor(batch, dtype="float64")
    if isinstance(first, (int, np.integer)):
        return T.tensor(batch)
    if isinstance(first, numbers.Number):
        return T.tensor(batch)
    if isinstance(first, (str, bytes)):
        return batch
    if isinstance(first, collections.abc.Mapping):
        return {key: default_collate([d[key] for d in batch]) for key in first}
    if isinstance(first, tuple) and hasattr(first, "_fields"):
        return type(first)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(first, collections.abc.Sequence):
        if any(len(b) != len(first) for b in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        return [default_collate(s) for s in zip(*batch)]
    raise TypeError("default_collate: batch must contain tensors, numpy arrays, numbers, "
                    f"dicts or lists; found {type(first)}")


class DataLoader:
    """Iterate a dataset in batches, optionally shuffled on torch's random stream (the
    same order as PyTorch after the same ``torch.manual_seed``). Single process only.

    >>> import funcgrad.mutable as torch
    >>> from funcgrad.mutable.utils.data import DataLoader, TensorDataset
    >>> _ = torch.manual_seed(0)
    >>> ds = TensorDataset(torch.arange(6))
    >>> [b.tolist() for (b,) in DataLoader(ds, batch_size=4, shuffle=True)]
    [[0, 4, 3, 5], [2, 1]]
    """

    def __init__(self, dataset, batch_size: int | None = 1, shuffle: bool | None = None,
                 sampler=None, batch_sampler=None, num_workers: int = 0,
                 collate_fn: Callable | None = None, pin_memory: bool = False,
                 drop_last: bool = False, timeout: float = 0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=None,
                 persistent_workers: bool = False, pin_memory_device: str = "",
                 in_order: bool = True) -> None:
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 to "
                             "disable multiprocessing.")
        self.dataset = dataset
        self.num_workers = num_workers  # batches are always loaded in this process
        self.generator = generator
        iterable = isinstance(dataset, IterableDataset)
        if iterable and (shuffle or sampler is not None or batch_sampler is not None):
            raise ValueError("DataLoader with IterableDataset: expected unspecified shuffle, "
                             "sampler or batch_sampler option")
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None and not iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle \
                else SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.collate_fn = collate_fn if collate_fn is not None else (
            default_collate if batch_size is not None or batch_sampler is not None
            else (lambda sample: sample))

    def __iter__(self) -> Iterator:
        # PyTorch's iterator draws a base seed for worker processes when it is made, whether
        # or not there are workers; the sampler draws its own when the first batch is read
        _random.random63(self.generator)
        return self._batches()

    def _batches(self) -> Iterator:
        if isinstance(self.dataset, IterableDataset):
            yield from self._iterable()
            return
        if self.batch_sampler is None:
            for index in self.sampler:
                yield self.collate_fn(self.dataset[index])
            return
        for indices in self.batch_sampler:
            yield self.collate_fn([self.dataset[i] for i in indices])

    def _iterable(self) -> Iterator:
        if self.batch_size is None:
            for sample in self.dataset:
                yield self.collate_fn(sample)
            return
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self) -> int:
        if isinstance(self.dataset, IterableDataset):
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self.batch_sampler) if self.batch_sampler is not None else len(self.sampler)
