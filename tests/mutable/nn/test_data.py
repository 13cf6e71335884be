"""funcgrad.mutable.utils.data against PyTorch: batches, order (shuffled on torch's stream),
drop_last, splits and collation."""
import numpy as np
import pytest

import funcgrad.mutable as fm
from funcgrad.mutable.utils import data

torch = pytest.importorskip("torch", reason="real PyTorch (CPU) is the oracle for utils.data")
tdata = torch.utils.data


def _batches(loader):
    out = []
    for batch in loader:
        out.append([b.tolist() for b in batch] if isinstance(batch, (list, tuple))
                   else batch.tolist())
    return out


@pytest.mark.parametrize("kwargs", [{}, {"batch_size": 4}, {"batch_size": 4, "drop_last": True},
                                    {"batch_size": 3, "shuffle": True},
                                    {"batch_size": 4, "shuffle": True, "drop_last": True},
                                    {"batch_size": None}, {"batch_size": 20, "shuffle": True}])
def test_dataloader_matches_torch(kwargs):
    x = np.arange(30, dtype=np.float32).reshape(10, 3)
    y = np.arange(10) % 3
    torch.manual_seed(5)
    theirs = tdata.DataLoader(tdata.TensorDataset(torch.tensor(x), torch.tensor(y)), **kwargs)
    want = [_batches(theirs), _batches(theirs)]  # two epochs: two shuffles
    after = torch.rand(2).tolist()
    fm.manual_seed(5)
    ours = data.DataLoader(data.TensorDataset(fm.tensor(x), fm.tensor(y)), **kwargs)
    got = [_batches(ours), _batches(ours)]
    assert got == want
    assert len(ours) == len(theirs)
    assert fm.rand(2).tolist() == after  # the global stream advanced alike


def test_shuffle_with_a_generator_leaves_the_global_stream_alone():
    torch.manual_seed(0)
    theirs = tdata.DataLoader(list(range(7)), batch_size=3, shuffle=True,
                              generator=torch.Generator().manual_seed(3))
    want = _batches(theirs), torch.rand(1).tolist()
    fm.manual_seed(0)
    ours = data.DataLoader(list(range(7)), batch_size=3, shuffle=True,
                           generator=data.dataset._random.Generator().manual_seed(3))
    assert (_batches(ours), fm.rand(1).tolist()) == want


def test_shuffled_training_data_in_a_loop_then_dropout():
    # what a tutorial does: shuffle, then draw dropout masks inside the loop
    x = np.arange(16, dtype=np.float32).reshape(8, 2)
    outs = []
    for lib, dmod in ((torch, tdata), (fm, data)):
        lib.manual_seed(1)
        loader = dmod.DataLoader(dmod.TensorDataset(lib.tensor(x)), batch_size=4, shuffle=True)
        outs.append([lib.nn.functional.dropout(b, 0.5).tolist() for (b,) in loader])
    assert outs[0] == outs[1]


def test_default_collate_matches_torch():
    samples = [({"a": 1.5, "b": np.array([1, 2])}, 3, (True, "s")),
               ({"a": 2.5, "b": np.array([3, 4])}, 4, (False, "t"))]
    ours = data.default_collate(samples)
    theirs = tdata.default_collate(samples)
    assert ours[0]["a"].tolist() == theirs[0]["a"].tolist()
    assert str(ours[0]["a"].dtype) == str(theirs[0]["a"].dtype)
    assert ours[0]["b"].tolist() == theirs[0]["b"].tolist()
    assert ours[1].tolist() == theirs[1].tolist() and str(ours[1].dtype) == str(theirs[1].dtype)
    assert ours[2][0].tolist() == theirs[2][0].tolist() and ours[2][1] == theirs[2][1]


def test_random_split_matches_torch():
    for lengths in ([3, 7], [0.3, 0.7], [0.5, 0.25, 0.25]):
        theirs = tdata.random_split(range(10), lengths, torch.Generator().manual_seed(2))
        ours = data.random_split(range(10), lengths,
                                 data.dataset._random.Generator().manual_seed(2))
        assert [list(s) for s in ours] == [list(s) for s in theirs]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        data.random_split(range(10), [3, 3])


def test_datasets_and_samplers():
    class Squares(data.Dataset):
        def __len__(self):
            return 5

        def __getitem__(self, i):
            return fm.tensor(float(i * i))

    loader = data.DataLoader(Squares(), batch_size=2)
    assert [b.tolist() for b in loader] == [[0.0, 1.0], [4.0, 9.0], [16.0]]
    both = Squares() + Squares()
    assert len(both) == 10 and both[7].item() == 4.0
    assert len(data.Subset(Squares(), [0, 2])) == 2
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        data.TensorDataset(fm.ones(3), fm.ones(4))
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        data.BatchSampler(data.SequentialSampler(range(3)), 0, False)
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        data.DataLoader(range(3), sampler=data.SequentialSampler(range(3)), shuffle=True)

    class Stream(data.IterableDataset):
        def __iter__(self):
            return iter(range(5))

    assert [b.tolist() for b in data.DataLoader(Stream(), batch_size=2)] == [[0, 1], [2, 3], [4]]
