"""torch.utils.data: Dataset, TensorDataset, samplers, DataLoader.

>>> import funcgrad.mutable as torch
>>> from funcgrad.mutable.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(torch.arange(5.0), torch.arange(5))
>>> [y.tolist() for _, y in DataLoader(ds, batch_size=2)]
[[0, 1], [2, 3], [4]]
"""
from .dataloader import DataLoader, default_collate
from .dataset import ConcatDataset, Dataset, IterableDataset, Subset, TensorDataset, random_split
from .sampler import BatchSampler, RandomSampler, Sampler, SequentialSampler

__all__ = ["Dataset", "IterableDataset", "TensorDataset", "Subset", "ConcatDataset",
           "random_split", "Sampler", "SequentialSampler", "RandomSampler", "BatchSampler",
           "DataLoader", "default_collate"]
