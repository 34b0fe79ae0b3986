"""The sentiment model's Python module (foldc_add_model(... PYTHON)) against
its command line: the same outputs, messages, evaluation and, for a training
loop written here, the same parameters to the bit.

ctest runs it with FOLDC_PYTHON_PATH (the module's folder), FOLDC_DRIVER
(sentiment_driver), FOLDC_SST_TO_JSONL and FOLDC_SST_DEV set.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.environ["FOLDC_PYTHON_PATH"])
import sentiment  # noqa: E402

DRIVER = os.environ["FOLDC_DRIVER"]


@pytest.fixture(scope="module")
def sst(tmp_path_factory):
    """40 dev trees as a JSON Lines file and as Python values."""
    out = tmp_path_factory.mktemp("sst")
    subprocess.run([os.environ["FOLDC_SST_TO_JSONL"], os.environ["FOLDC_SST_DEV"], "-o", str(out)],
                   check=True, capture_output=True)
    lines = (out / "dev.jsonl").read_text().splitlines()[:40]
    (out / "small.jsonl").write_text("\n".join(lines) + "\n")
    return out / "small.jsonl", [json.loads(line) for line in lines]


def driver(*args):
    return subprocess.run([DRIVER, *args], check=True, capture_output=True, text=True).stdout


def test_infer_gives_the_command_lines_outputs(sst, tmp_path):
    data, trees = sst
    model = sentiment.Model(seed=3)
    model.save(str(tmp_path / "p.st"))
    cli = [json.loads(line)["output"] for line in
           driver("infer", "--data", str(data), "--params", str(tmp_path / "p.st")).splitlines()]
    ours = model.infer(trees)
    assert len(ours) == len(cli) == 40
    np.testing.assert_allclose(np.array(ours), np.array(cli), rtol=1e-5, atol=1e-7)
    assert model.infer([json.dumps(trees[0])]) == model.infer([trees[0]]), "JSON strings too"


def test_eval_gives_the_command_lines_loss_and_metrics(sst, tmp_path):
    data, trees = sst
    model = sentiment.Model(seed=4)
    model.save(str(tmp_path / "p.st"))
    cli = json.loads(driver("eval", "--data", str(data), "--params", str(tmp_path / "p.st")))
    ours = model.eval(trees)
    assert set(ours) == set(cli)
    for key in cli:
        assert ours[key] == pytest.approx(cli[key], rel=1e-6)
    assert model.metric_names == ["all_hits", "binary_root_hits", "root_hits"]


def bf16_here():
    with open("/proc/cpuinfo") as cpuinfo:
        return " avx512_bf16" in cpuinfo.read()


@pytest.mark.skipif(not bf16_here(), reason="no AVX-512 BF16 on this CPU")
def test_bf16_infer_and_eval_give_the_command_lines_results(sst, tmp_path):
    data, trees = sst
    model = sentiment.Model(seed=5)
    model.save(str(tmp_path / "p.st"))
    params = ["--data", str(data), "--params", str(tmp_path / "p.st"), "--precision", "bf16"]
    cli = [json.loads(line)["output"] for line in driver("infer", *params).splitlines()]
    ours = model.infer(trees, precision="bf16")
    np.testing.assert_allclose(np.array(ours), np.array(cli), rtol=1e-5, atol=1e-7)
    fp32 = model.infer(trees)
    assert ours != fp32, "the products ran in bf16"
    np.testing.assert_allclose(np.array(ours), np.array(fp32), rtol=1e-2, atol=1e-3)
    assert model.eval(trees, precision="bf16")["loss"] == pytest.approx(
        json.loads(driver("eval", *params))["loss"], rel=1e-6)


def test_a_precision_that_does_not_exist_is_an_error():
    with pytest.raises(ValueError, match="precision must be 'f32' or 'bf16', not 'fp8'"):
        sentiment.Model().infer([], precision="fp8")


def test_errors_are_exceptions_with_the_command_lines_message(sst, tmp_path):
    bad = {"Leaf": {"word": "x", "label": 1}}
    (tmp_path / "bad.jsonl").write_text(json.dumps(bad) + "\n")
    cli = subprocess.run([DRIVER, "infer", "--init", "--data", str(tmp_path / "bad.jsonl")],
                         capture_output=True, text=True)
    assert cli.returncode == 1
    message = cli.stderr.split("bad.jsonl:1: ")[1].strip()
    with pytest.raises(ValueError) as error:
        sentiment.Model().infer([bad])
    assert str(error.value) == "example:0: " + message
    with pytest.raises(IndexError, match="outside"):
        sentiment.Model().infer([{"Leaf": {"word": 10 ** 6, "label": 1}}])
    with pytest.raises(ValueError, match="invalid JSON at column"):
        sentiment.Model().infer(["{"])
    with pytest.raises(ValueError, match="cannot open"):
        sentiment.Model().load(str(tmp_path / "missing.st"))
    with pytest.raises(ValueError, match="no optimizer 'adamax'"):
        sentiment.Optimizer("adamax")


def test_params_are_numpy_views_of_the_model(tmp_path):
    model = sentiment.Model(seed=1)
    bias = model.params["classify.b"]
    assert bias.dtype == np.float32 and bias.shape == (5,)
    assert model.params["words.E"].shape == (21701, 300)
    bias[:] = 0.5
    assert model.params["classify.b"][0] == 0.5, "a write through numpy reaches the model"
    other = sentiment.Model(seed=2)
    other.save(str(tmp_path / "other.st"))
    model.load(str(tmp_path / "other.st"))
    assert np.array_equal(bias, other.params["classify.b"]), "the view sees what load read"


def test_a_python_training_loop_ends_where_the_command_line_does(sst, tmp_path):
    data, trees = sst
    seed, batch, epochs = 2, 10, 2
    driver("train", "--data", str(data), "--epochs", str(epochs), "--batch-size", str(batch),
           "--optimizer", "adagrad", "--lr", "0.05", "--weight-decay", "1e-4", "--seed", str(seed),
           "--save", str(tmp_path / "cli.st"))
    model = sentiment.Model(seed=seed)
    optimizer = sentiment.Optimizer("adagrad", lr=0.05, weight_decay=1e-4)
    step = 0
    for epoch in range(1, epochs + 1):
        order = sentiment.train_order(len(trees), seed, epoch)
        for at in range(0, len(order), batch):
            step += 1
            result = model.train_step([trees[i] for i in order[at:at + batch]], optimizer,
                                      seed=seed * 1000003 + step)
            assert np.isfinite(result["loss"])
    cli = sentiment.Model()
    cli.load(str(tmp_path / "cli.st"))
    for name, values in cli.params.items():
        assert np.array_equal(model.params[name], values), name


def test_results_do_not_depend_on_the_thread_count(sst):
    """infer, eval and a training step, bit-identical at 1, 2 and 3 GEMM
    threads: more threads take parts of C's rows, never of a sum."""
    _, trees = sst
    runs = []
    try:
        for threads in (1, 2, 3):
            sentiment.set_threads(threads)
            model = sentiment.Model(seed=5)
            outputs = np.array(model.infer(trees))
            evaluation = model.eval(trees)
            step = model.train_step(trees, sentiment.Optimizer("adam", lr=0.01), seed=9)
            params = {name: np.array(values) for name, values in model.params.items()}
            runs.append((threads, outputs, evaluation, step, params))
    finally:
        sentiment.set_threads(1)
    _, outputs, evaluation, step, params = runs[0]
    for threads, other_outputs, other_evaluation, other_step, other_params in runs[1:]:
        assert np.array_equal(outputs, other_outputs), f"infer at {threads} threads"
        assert evaluation == other_evaluation, f"eval at {threads} threads"
        assert step == other_step, f"train_step's loss and metrics at {threads} threads"
        for name in params:
            assert np.array_equal(params[name], other_params[name]), f"{name} at {threads} threads"


def test_a_summed_loss_steps_as_the_mean_at_a_rate_times_the_batch(sst):
    """reduction="sum": SGD at lr / 4 on a batch of 4 ends on the mean's
    parameters to the bit (1/4 is exact in floats)."""
    _, trees = sst
    mean, summed = sentiment.Model(seed=6), sentiment.Model(seed=6)
    mean.train_step(trees[:4], sentiment.Optimizer("sgd", lr=0.2))
    summed.train_step(trees[:4], sentiment.Optimizer("sgd", lr=0.05), reduction="sum")
    for name in mean.params:
        assert np.array_equal(mean.params[name], summed.params[name]), name
    with pytest.raises(ValueError, match="reduction must be 'mean' or 'sum', not 'total'"):
        summed.train_step(trees[:4], sentiment.Optimizer("sgd"), reduction="total")
