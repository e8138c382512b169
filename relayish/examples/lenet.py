"""The Relay paper's Figure 4: LeNet written as decorated Python, trained on handwritten digits.

    python -m relayish.examples.lenet                 # scikit-learn's digits, upsampled to 28x28
    python -m relayish.examples.lenet --mnist DIR     # MNIST IDX files already in DIR

The model and loss are the paper's, nearly verbatim; the one change is a batch dimension
``N`` on the input (``Tensor[Float, (N, 1, 28, 28)]``), so that a step trains on a batch.
It prints the typed IR of ``loss``, a line per step (loss, examples per second) and the
test accuracy of the exported model.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from relayish import Dim, Float, Tensor, relay, relay_model

N = Dim("N")


@relay_model
def lenet(x: Tensor[Float, (N, 1, 28, 28)]) -> Tensor[Float, (N, 10)]:
    conv1 = relay.conv2d(x, num_filter=20, ksize=[1, 5, 5, 1], no_bias=False)
    tanh1 = relay.tanh(conv1)
    pool1 = relay.max_pool(tanh1, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1])
    conv2 = relay.conv2d(pool1, num_filter=50, ksize=[1, 5, 5, 1], no_bias=False)
    tanh2 = relay.tanh(conv2)
    pool2 = relay.max_pool(tanh2, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1])
    flatten = relay.flatten_layer(pool2)
    fc1 = relay.linear(flatten, num_hidden=500)
    tanh3 = relay.tanh(fc1)
    return relay.linear(tanh3, num_hidden=10)


@relay
def loss(x: Tensor[Float, (N, 1, 28, 28)], y: Tensor[Float, (N, 10)]) -> Float:
    return relay.softmax_cross_entropy(lenet(x), y)


def train_lenet(training_data, epochs: int, batch: int, lr: float, seed: int, log_every: int) -> relay.Model:
    model = relay.create_model(lenet, seed=seed)
    rng = np.random.default_rng(seed)
    steps = epochs * (len(training_data) // batch)
    step = 0
    for epoch in range(epochs):
        for x, y in training_data.batches(batch, rng):
            start = time.perf_counter()
            model_grad = relay.grad(model, loss, (x, y))
            relay.update_model_params(model, model_grad, lr)
            step += 1
            if step % log_every == 0 or step == steps:
                rate = batch / (time.perf_counter() - start)
                print(f"epoch {epoch + 1}  step {step:4d}/{steps}  loss {float(model_grad.value):.4f}  "
                      f"{rate:7.0f} examples/s", flush=True)
    return model


def accuracy(predict, data, batch: int = 256) -> float:
    correct = 0
    for i in range(0, len(data), batch):
        logits = predict(data.images[i:i + batch])
        correct += int(np.sum(np.argmax(logits, axis=1) == data.labels[i:i + batch]))
    return correct / len(data)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m relayish.examples.lenet", description=__doc__.splitlines()[0])
    parser.add_argument("--mnist", metavar="DIR", help="train on the MNIST IDX files in DIR instead of the digits")
    parser.add_argument("--limit", type=int, default=None, help="with --mnist: use only the first LIMIT examples")
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.1, help="SGD learning rate")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--log-every", type=int, default=5, metavar="K", help="print every K steps")
    parser.add_argument("--save", metavar="FILE.npz", help="save the trained parameters")
    args = parser.parse_args(argv)

    from jit.kernels.registry import cache_dir

    from .data import load_digits, load_mnist

    try:
        training_data, test_data = load_mnist(args.mnist, args.limit) if args.mnist else load_digits(seed=args.seed)
    except (ImportError, OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    source = f"MNIST from {args.mnist}" if args.mnist else "scikit-learn's digits, upsampled to 28x28"
    print(f"# {source}: {len(training_data)} training and {len(test_data)} test images")
    print("# the typed IR of loss (and the model it calls):")
    print(loss.ir)
    print(f"# backend: {loss.backend}" + (" (the first step runs on the evaluator, the second waits for the "
                                          f"program's kernels; they are cached in {cache_dir()} for the next run)"
                                          if loss.backend == "jit" else ""))
    start = time.perf_counter()
    model = train_lenet(training_data, args.epochs, args.batch, args.lr, args.seed, args.log_every)
    print(f"# trained in {time.perf_counter() - start:.1f} s")
    if args.save:
        model.save(args.save)
        print(f"# saved the parameters to {args.save}")
    predict = relay.export_model(model)
    print(f"test accuracy: {100 * accuracy(predict, test_data):.2f}% on {len(test_data)} images")
    return 0


if __name__ == "__main__":
    sys.exit(main())
