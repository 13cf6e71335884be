"""The seed posts' examples (dynamic graph, leaf tensors, hooks, versions), as oracle snippets."""


def _err(e):
    return [type(e).__name__, str(e)]


def _embedding_and_d(torch, nn):
    embedding = nn.Parameter(torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]]))
    d = nn.Parameter(torch.tensor([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0], [2.0, -2.0, 1.0]]))
    return embedding, d


def select_then_assign_fails(torch, nn):
    # user_embeddings[0] is a view (SelectBackward0); matmul saved it for d's gradient,
    # and assigning into user_embeddings[0] modifies it.
    embedding, d = _embedding_and_d(torch, nn)
    user_embeddings = embedding.clone()
    user_embedding_input = user_embeddings[0]
    option1 = user_embedding_input * 3
    a = torch.matmul(d, user_embedding_input)
    out = {
        "option1": str(option1),
        "a": str(a),
        "input_grad_fn": type(user_embedding_input.grad_fn).__name__,
        "input_version_before": user_embedding_input._version,
    }
    user_embeddings[0] = a
    out["input_version_after"] = user_embedding_input._version
    out["base_version_after"] = user_embeddings._version
    out["base_grad_fn"] = type(user_embeddings.grad_fn).__name__
    loss = a.sum()
    try:
        loss.backward()
        out["error"] = None
    except RuntimeError as e:
        out["error"] = _err(e)
    return out


def index_then_assign_works(torch, nn):
    # user_embeddings[[0], :] is advanced indexing: a copy, so assigning into the base later
    # does not touch what matmul saved.
    embedding, d = _embedding_and_d(torch, nn)
    user_embeddings = embedding.clone()
    user_embedding_input = user_embeddings[[0], :]
    a = torch.matmul(user_embedding_input, d)
    out = {"a": str(a), "input_grad_fn": type(user_embedding_input.grad_fn).__name__}
    user_embeddings[[0], :] = a
    out["base_grad_fn"] = type(user_embeddings.grad_fn).__name__
    out["input_version"] = user_embedding_input._version
    loss = a.sum()
    loss.backward()
    out["embedding_grad"] = embedding.grad.tolist()
    out["d_grad"] = d.grad.tolist()
    return out


def rebinding_the_input_name_is_harmless(torch, nn):
    embedding, d = _embedding_and_d(torch, nn)
    user_embeddings = embedding.clone()
    user_embedding_input = user_embeddings[[0], :]
    a = torch.matmul(user_embedding_input, d)
    user_embeddings[[0], :] = a
    user_embedding_input = 3  # rebinding a Python name is not an in-place operation
    loss = a.sum()
    loss.backward()
    return {"embedding_grad": embedding.grad.tolist(), "d_grad": d.grad.tolist(),
            "rebound": user_embedding_input}


def assigning_into_the_index_copy_fails(torch, nn):
    embedding, d = _embedding_and_d(torch, nn)
    user_embeddings = embedding.clone()
    user_embedding_input = user_embeddings[[0], :]
    a = torch.matmul(user_embedding_input, d)
    user_embeddings[[0], :] = a
    user_embedding_input[0] = 2
    out = {"input_version": user_embedding_input._version,
           "input_grad_fn": type(user_embedding_input.grad_fn).__name__}
    loss = a.sum()
    try:
        loss.backward()
        out["error"] = None
    except RuntimeError as e:
        out["error"] = _err(e)
    return out


def rnn_like_select_assignment(torch, nn):
    # Assigning e into b carries e's history: b becomes CopySlices over it, twice.
    a = nn.Parameter(torch.tensor([[2.]]))
    b = a.clone()
    out = {"b": str(b)}
    d = nn.Parameter(torch.tensor(3.))
    out["d"] = str(d)
    e = b[[0], :] * d
    b[0] = e
    out["e1"] = str(e)
    loss1 = e.sum()
    e = b[[0], :] * d
    b[0] = e
    out["e2"] = str(e)
    loss1 += e.sum()
    out["loss1"] = str(loss1)
    out["b_after"] = str(b)
    out["b_version"] = b._version
    loss1.backward()
    out["d_grad"] = d.grad.tolist()
    out["a_grad"] = a.grad.tolist()
    out["d_grad_str"] = str(d.grad)
    out["a_grad_str"] = str(a.grad)
    return out


def assigning_grad_value_makes_whole_tensor_require_grad(torch, nn):
    w = torch.tensor(2.0, requires_grad=True)
    x = torch.zeros(3)
    before = [x.requires_grad, x.is_leaf, x.grad_fn is None]
    x[1] = w * 5
    after = [x.requires_grad, x.is_leaf, type(x.grad_fn).__name__]
    x.sum().backward()
    return {"before": before, "after": after, "x": str(x), "w_grad": w.grad.item()}


def _regression_data(torch):
    w = torch.tensor([[3.0, 1.0]], requires_grad=True)
    b = torch.tensor([[3.0]], requires_grad=True)
    X = torch.tensor([[1.0, 2.0], [-1.0, 0.5], [0.0, 3.0]])
    Y = torch.tensor([[2.0], [1.0], [-1.0]])
    return w, b, X, Y


def forward_runs_immediately(torch, nn):
    w, b, X, Y = _regression_data(torch)
    Y_hat = X @ w.t() + b
    loss = torch.mean(torch.pow(Y_hat - Y, 2))
    return {
        "loss_data": str(loss.data),
        "Y_hat_data": str(Y_hat.data),
        "loss": str(loss),
        "Y_hat": str(Y_hat),
        "data_requires_grad": loss.data.requires_grad,
        "data_grad_fn": loss.data.grad_fn,
        "grad_fns": [type(t.grad_fn).__name__ for t in (loss, Y_hat)],
    }


def graph_is_freed_after_backward(torch, nn):
    w, b, X, Y = _regression_data(torch)
    Y_hat = X @ w.t() + b
    loss = torch.mean(torch.pow(Y_hat - Y, 2))
    loss.backward()
    out = {"w_grad": w.grad.tolist(), "b_grad": b.grad.tolist()}
    try:
        loss.backward()
        out["second"] = None
    except RuntimeError as e:
        out["second"] = _err(e)
    return out


def retain_graph_allows_second_backward(torch, nn):
    w, b, X, Y = _regression_data(torch)
    Y_hat = X @ w.t() + b
    loss = torch.mean(torch.pow(Y_hat - Y, 2))
    loss.backward(retain_graph=True)
    first = w.grad.tolist()
    loss.backward()
    return {"first": first, "accumulated": w.grad.tolist(), "b_grad": b.grad.tolist()}


def _my_relu(torch):
    class MyReLU(torch.autograd.Function):
        @staticmethod
        def forward(ctx, input):
            ctx.save_for_backward(input)
            return input.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            input, = ctx.saved_tensors
            grad_input = grad_output.clone()
            grad_input[input < 0] = 0
            return grad_input
    return MyReLU


def custom_relu_function(torch, nn):
    relu = _my_relu(torch).apply
    w = torch.tensor([[3.0, 1.0]], requires_grad=True)
    b = torch.tensor([[3.0]], requires_grad=True)
    X = torch.tensor([[-1.0, -1.0], [1.0, 1.0]])
    Y = torch.tensor([[2.0, 3.0]])
    Y_hat = relu(X @ w.t() + b)
    loss = torch.mean(torch.pow(Y_hat - Y, 2))
    loss.backward()
    return {"w_grad": str(w.grad), "b_grad": str(b.grad), "Y_hat": str(Y_hat),
            "Y_hat_grad_fn": type(Y_hat.grad_fn).__name__, "loss": loss.item()}


def chain_rule_accumulates_on_leaf(torch, nn):
    import warnings
    x = torch.tensor(3.0, requires_grad=True)
    y1 = x + 1
    y2 = 2 * x
    loss = (y1 - y2) ** 2
    loss.backward()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        grads = {"loss.grad": loss.grad, "y1.grad": y1.grad, "y2.grad": y2.grad}
    return {
        "non_leaf_grads": {k: v for k, v in grads.items()},
        "x_grad": str(x.grad),
        "warnings": len(caught),
        "warning_category": type(caught[0].message).__name__ if caught else None,
        "warning_start": str(caught[0].message)[:120] if caught else None,
    }


def hooks_and_retain_grad_on_intermediates(torch, nn):
    printed = []
    x = torch.tensor(3.0, requires_grad=True)
    y1 = x + 1
    y2 = 2 * x
    loss = (y1 - y2) ** 2
    y1.register_hook(lambda grad: printed.append("y1 grad: " + str(grad)))
    y2.register_hook(lambda grad: printed.append("y2 grad: " + str(grad)))
    loss.retain_grad()
    loss.backward()
    printed.append("loss.grad: " + str(loss.grad))
    printed.append("x.grad: " + str(x.grad))
    return printed


def exp_repr(torch, nn):
    a = torch.tensor(2.0, requires_grad=True)
    b = a.exp()
    return [repr(b), str(b), type(b.grad_fn).__name__]


def _mean_example(torch):
    input = torch.ones([2, 2], requires_grad=False)
    w1 = torch.tensor(2.0, requires_grad=True)
    w2 = torch.tensor(3.0, requires_grad=True)
    w3 = torch.tensor(3.0, requires_grad=True)
    l1 = input * w1
    l2 = l1 + w2
    l3 = l1 * w3
    l4 = l2 * l3
    return input, w1, w2, w3, l1, l2, l3, l4


def mean_example_gradients(torch, nn):
    input, w1, w2, w3, l1, l2, l3, l4 = _mean_example(torch)
    loss = l4.mean()
    before = [str(w1.data), w1.grad, w1.grad_fn, str(l1.data), type(l1.grad_fn).__name__,
              str(loss.data), type(loss.grad_fn).__name__]
    loss.backward()
    return {"before": before, "w1": [str(w1.data), str(w1.grad), w1.grad_fn],
            "w1_grad": w1.grad.item(), "w2_grad": w2.grad.item(), "w3_grad": w3.grad.item(),
            "input_grad": input.grad}


def is_leaf_of_created_and_computed(torch, nn):
    a = torch.ones([2, 2], requires_grad=True)
    b = a + 2
    c = torch.ones([2, 2])
    return {"a": [a.is_leaf, a.grad_fn], "b": [b.is_leaf, type(b.grad_fn).__name__],
            "c": [c.is_leaf, c.requires_grad, c.grad_fn], "c_plus": (c + 2).is_leaf}


def retain_grad_keeps_intermediate_grads(torch, nn):
    input, w1, w2, w3, l1, l2, l3, l4 = _mean_example(torch)
    loss = l4.mean()
    l1.retain_grad()
    l4.retain_grad()
    loss.retain_grad()
    loss.backward()
    return [str(loss.grad), str(l4.grad), str(l1.grad),
            [l1.retains_grad, l4.retains_grad, loss.retains_grad, l2.retains_grad]]


def hook_order_loss_then_l4_then_l1(torch, nn):
    printed = []
    input, w1, w2, w3, l1, l2, l3, l4 = _mean_example(torch)
    loss2 = l4.mean()
    l1.register_hook(lambda grad: printed.append("l1 grad: " + str(grad)))
    l4.register_hook(lambda grad: printed.append("l4 grad " + str(grad)))
    loss2.register_hook(lambda grad: printed.append("loss grad: " + str(grad)))
    loss2.backward()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        printed.append(str(loss2.grad))
    return printed


def id_changes_on_out_of_place(torch, nn):
    a = torch.tensor([3.0, 1.0])
    before = a
    a = a.exp()
    b = torch.tensor([1.0, 2.0])
    same = b
    b[0] = 10
    return {"exp_is_new_object": a is not before, "setitem_same_object": same is b,
            "b": b.tolist(), "a": a.tolist()}


def version_conflict_message(torch, nn):
    a = torch.tensor([1.0, 3.0], requires_grad=True)
    b = a + 2
    out = {"version_before": b._version}
    loss = (b * b).mean()
    b[0] = 1000.0
    out["version_after"] = b._version
    try:
        loss.backward()
        out["error"] = None
    except RuntimeError as e:
        out["error"] = _err(e)
    return out


def leaf_slice_assignment_and_add_(torch, nn):
    a = torch.tensor([10., 5., 2., 3.], requires_grad=True)
    out = {"a": [str(a), a.is_leaf]}
    try:
        a[:] = 0
        out["setitem"] = None
    except RuntimeError as e:
        out["setitem"] = _err(e)
    try:
        a.add_(10.)
        out["add_"] = None
    except RuntimeError as e:
        out["add_"] = _err(e)
    out["after"] = [str(a), a.is_leaf, a._version]
    loss3 = (a * a).mean()
    loss3.backward()
    out["a_grad"] = a.grad.tolist()
    try:
        loss3.backward()
        out["second"] = None
    except RuntimeError as e:
        out["second"] = _err(e)
    return out


def leaf_slice_assignment_under_no_grad(torch, nn):
    # The post's a[:] = 0 as PyTorch 2.x lets it happen: on the leaf's storage, untracked.
    a = torch.tensor([10., 5., 2., 3.], requires_grad=True)
    with torch.no_grad():
        a[:] = 0
        a.add_(10.)
    out = [str(a), a.is_leaf, a._version, a.grad_fn]
    loss3 = (a * a).mean()
    loss3.backward()
    return out + [a.grad.tolist()]


def non_leaf_slice_assignment_becomes_copyslices(torch, nn):
    a = torch.tensor([10., 5., 2., 3.], requires_grad=True).clone()
    a[:] = 0
    a.add_(10.)
    out = [str(a), a.is_leaf, type(a.grad_fn).__name__, a._version]
    loss3 = (a * a).mean()
    loss3.backward()
    try:
        loss3.backward()
        out.append(None)
    except RuntimeError as e:
        out.append(_err(e))
    return out


def select_then_assign_fails_with_rand_parameters(torch, nn):
    # The seed post's exact code, with random parameters: only the failure matters here.
    torch.manual_seed(0)
    embedding = nn.Parameter(torch.rand(2, 3))
    d = nn.Parameter(torch.rand(3, 3))
    user_embeddings = embedding.clone()
    user_embedding_input = user_embeddings[0]
    a = torch.matmul(d, user_embedding_input)
    user_embeddings[0] = a
    loss = a.sum()
    try:
        loss.backward()
        return [type(a.grad_fn).__name__, None]
    except RuntimeError as e:
        return [type(a.grad_fn).__name__, _err(e)]


def dynamic_graph_with_random_data(torch, nn):
    # The post's code with randn data: values differ between libraries, structure does not.
    torch.manual_seed(0)
    w = torch.tensor([[3.0, 1.0]], requires_grad=True)
    b = torch.tensor([[3.0]], requires_grad=True)
    X = torch.randn(10, 2)
    Y = torch.randn(10, 1)
    Y_hat = X @ w.t() + b
    loss = torch.mean(torch.pow(Y_hat - Y, 2))
    out = [list(Y_hat.data.shape), list(loss.data.shape), loss.data.requires_grad,
           type(Y_hat.grad_fn).__name__, type(loss.grad_fn).__name__]
    loss.backward()
    out += [list(w.grad.shape), list(b.grad.shape)]
    try:
        loss.backward()
        out.append(None)
    except RuntimeError as e:
        out.append(_err(e))
    return out
