"""Model.fit: the driver's `train` loop in Python, to the bit: the same
shuffles (train_order), the same dropout seeds per step, the epoch's loss
and metrics added up as `train` adds them."""
import sys
import time


class _EpochResult:
    """An epoch's examples, mean loss and metric sums, added batch by batch
    as the runtime's BatchResult::add does (the same double operations)."""

    def __init__(self, names):
        self.names, self.examples, self.loss = names, 0, 0.0
        self.sums = [[0.0, 0] for _ in names]

    def add(self, examples, loss, metrics):
        total = self.examples + examples
        if total > 0:
            self.loss = (self.loss * self.examples + loss * examples) / total
        self.examples = total
        for m, (value, emitted) in enumerate(metrics):
            self.sums[m][0] += value
            self.sums[m][1] += emitted

    def as_dict(self):
        out = {"examples": self.examples, "loss": self.loss}
        for name, (value, emitted) in zip(self.names, self.sums):
            out[name] = value / emitted if emitted else 0.0
        return out


def _progress(epoch, epochs, done, total, loss, began, out):
    width = 30
    filled = width * done // max(total, 1)
    out.write(f"\repoch {epoch}/{epochs} [{'#' * filled}{'.' * (width - filled)}] "
              f"{done}/{total} loss {loss:.4f} {time.monotonic() - began:.1f} s")
    out.flush()


def fit(self, train, dev=None, epochs=1, batch_size=32, optimizer=None, seed=1,
        reduction="mean", progress=True):
    """Trains on `train` (a list of examples) as `NAME_driver train --epochs
    EPOCHS --batch-size BATCH_SIZE --seed SEED` does, with `optimizer` (an
    Optimizer of this model's module; by default Adam), evaluating `dev`
    after each epoch. Draws a progress bar on stderr. Gives one dict per
    epoch, as `train` prints: {"epoch", "train": {"examples", "loss",
    METRIC...}, "dev": {...} (with dev), "seconds"}."""
    module = sys.modules[type(self).__module__]
    optimizer = optimizer if optimizer is not None else module.Optimizer("adam")
    train = list(train)
    results, step, began = [], 0, time.monotonic()
    for epoch in range(1, epochs + 1):
        order = module.train_order(len(train), seed, epoch)
        result = _EpochResult(self.metric_names)
        for at in range(0, len(order), batch_size):
            step += 1
            batch = [train[i] for i in order[at:at + batch_size]]
            result.add(*self._train_step(batch, optimizer, seed=seed * 1000003 + step,
                                         reduction=reduction))
            if progress:
                _progress(epoch, epochs, min(at + batch_size, len(order)), len(order),
                          result.loss, began, sys.stderr)
        if progress:
            sys.stderr.write("\n")
        report = {"epoch": epoch, "train": result.as_dict()}
        if dev is not None:
            report["dev"] = self.eval(list(dev))
        report["seconds"] = time.monotonic() - began
        results.append(report)
    return results
