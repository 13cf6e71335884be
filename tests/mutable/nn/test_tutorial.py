"""Tutorial-style programs run twice, verbatim: once with real PyTorch, once with
``funcgrad.mutable`` bound as ``torch``. Same seeds, same losses, step by step.

(Integer labels are drawn as ``(torch.rand(n) * k).long()``: ``torch.randint`` is exposed
by the tensor layer; tests/mutable/nn/test_random.py checks the stream behind it.)"""
import numpy as np
import pytest

import funcgrad.mutable

real_torch = pytest.importorskip("torch", reason="real PyTorch (CPU) is the oracle for the "
                                                 "tutorial programs")


def mlp_classifier(torch, optimizer_name):
    """A two-layer classifier on seeded blobs: CrossEntropyLoss, DataLoader, an optimizer."""
    nn = torch.nn
    from_data = torch.utils.data
    torch.manual_seed(0)
    centers = torch.randn(3, 2) * 3
    labels = (torch.rand(96) * 3).long()
    points = centers[labels] + torch.randn(96, 2)
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 3))
    loss_fn = nn.CrossEntropyLoss()
    if optimizer_name == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    else:
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
    loader = from_data.DataLoader(from_data.TensorDataset(points, labels), batch_size=16,
                                  shuffle=True)
    losses = []
    for epoch in range(3):
        model.train()
        for xb, yb in loader:
            opt.zero_grad()
            loss = loss_fn(model(xb), yb)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        accuracy = (model(points).argmax(1) == labels).float().mean().item()
    return losses, accuracy, [p._version for p in model.parameters()]


def convnet_step(torch):
    """A small convnet (conv, batch norm, pool, dropout, linear) on seeded images."""
    nn = torch.nn
    F = torch.nn.functional

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 4, 3, padding=1)
            self.bn = nn.BatchNorm2d(4)
            self.conv2 = nn.Conv2d(4, 8, 3)
            self.drop = nn.Dropout(0.25)
            self.fc = nn.Linear(8 * 2 * 2, 10)

        def forward(self, x):
            x = F.max_pool2d(F.relu(self.bn(self.conv1(x))), 2)
            x = F.max_pool2d(F.relu(self.conv2(x)), 2)
            x = self.drop(torch.flatten(x, 1))
            return F.log_softmax(self.fc(x), dim=1)

    torch.manual_seed(1)
    model = Net()
    images = torch.randn(8, 1, 12, 12)
    targets = (torch.rand(8) * 10).long()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.5)
    scheduler = torch.optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
    losses = []
    for step in range(4):
        opt.zero_grad()
        loss = F.nll_loss(model(images), targets)
        loss.backward()
        opt.step()
        scheduler.step()
        losses.append(loss.item())
    return losses, model.bn.running_mean.tolist(), int(model.bn.num_batches_tracked)


def sequence_regression(torch):
    """An embedding and an LSTM regressing a seeded target with MSELoss and RMSprop."""
    nn = torch.nn
    torch.manual_seed(2)
    embed = nn.Embedding(12, 5)
    lstm = nn.LSTM(5, 6, batch_first=True)
    head = nn.Linear(6, 1)
    params = list(embed.parameters()) + list(lstm.parameters()) + list(head.parameters())
    opt = torch.optim.RMSprop(params, lr=0.01)
    tokens = (torch.rand(4, 7) * 12).long()
    target = torch.randn(4, 1)
    losses = []
    for _ in range(4):
        opt.zero_grad()
        out, (h, c) = lstm(embed(tokens))
        loss = nn.MSELoss()(head(out[:, -1]), target)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def logistic_regression(torch):
    """BCEWithLogitsLoss with Adagrad on a seeded linear problem."""
    torch.manual_seed(3)
    x = torch.randn(32, 4)
    y = (x @ torch.tensor([1.0, -2.0, 0.5, 0.0]) > 0).float().unsqueeze(1)
    model = torch.nn.Linear(4, 1)
    opt = torch.optim.Adagrad(model.parameters(), lr=0.5)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    losses = []
    for _ in range(5):
        opt.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


@pytest.mark.parametrize("optimizer_name", ["sgd", "adam"])
def test_mlp_classifier(optimizer_name):
    ours = mlp_classifier(funcgrad.mutable, optimizer_name)
    theirs = mlp_classifier(real_torch, optimizer_name)
    assert len(ours[0]) == len(theirs[0]) == 18
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-7)  # losses near 1e-4
    assert ours[1] == theirs[1]
    assert ours[2] == theirs[2]
    assert theirs[0][-1] < theirs[0][0]  # it learns


def test_convnet():
    ours, theirs = convnet_step(funcgrad.mutable), convnet_step(real_torch)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-5, atol=1e-7)  # losses near 1e-4
    np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-5, atol=1e-7)
    assert ours[2] == theirs[2] == 4


def test_embedding_lstm():
    np.testing.assert_allclose(sequence_regression(funcgrad.mutable),
                               sequence_regression(real_torch), rtol=2e-5)


def test_logistic_regression():
    np.testing.assert_allclose(logistic_regression(funcgrad.mutable),
                               logistic_regression(real_torch), rtol=1e-5)
