"""Python objects used the wrong way: each is a Python exception that says
what to do instead, and leaves the model as it was; calls from several
threads at once take turns; two generated modules live in one process.

ctest runs it with FOLDC_PYTHON_PATH (the modules' folder) and
FOLDC_SEQ2SEQ_DRIVER (seq2seq_driver) set.
"""
import json
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

sys.path.insert(0, os.environ["FOLDC_PYTHON_PATH"])
import sentiment  # noqa: E402
import seq2seq  # noqa: E402

LEAF = {"Leaf": {"word": 3, "label": 1}}
TREE = {"Node": {"left": LEAF, "right": {"Leaf": {"word": 7, "label": 4}}, "label": 2}}


def copy_params(model):
    return {name: np.array(values) for name, values in model.params.items()}


def test_one_string_for_a_list_of_examples_is_a_type_error():
    with pytest.raises(TypeError, match="got one string; pass \\[example\\]"):
        sentiment.Model().infer(json.dumps(LEAF))


@pytest.mark.parametrize("arguments,message", [
    ({"lr": -1.0}, "lr must be a finite number > 0, not -1.0"),
    ({"lr": 0.0}, "lr must be a finite number > 0, not 0.0"),
    ({"lr": float("nan")}, "lr must be a finite number > 0, not nan"),
    ({"clip": -1.0}, "clip must be a finite number >= 0, not -1.0"),
    ({"weight_decay": float("inf")}, "weight_decay must be a finite number >= 0, not inf"),
])
def test_optimizer_settings_out_of_range_are_value_errors(arguments, message):
    with pytest.raises(ValueError) as error:
        sentiment.Optimizer("adam", **arguments)
    assert str(error.value) == message


def test_optimizer_defaults_and_a_valid_rate():
    assert sentiment.Optimizer("adagrad").lr == pytest.approx(0.05)
    optimizer = sentiment.Optimizer("sgd", lr=0.5, clip=0.0, weight_decay=0.0)
    with pytest.raises(ValueError, match="lr must be"):
        optimizer.lr = -0.1
    assert optimizer.lr == 0.5, "a refused rate changes nothing"


def test_threads_and_epochs_below_one_are_value_errors():
    with pytest.raises(ValueError, match="threads must be at least 1, not 0"):
        sentiment.set_threads(0)
    with pytest.raises(ValueError, match="epochs count from 1"):
        sentiment.train_order(5, 1, 0)
    assert sorted(sentiment.train_order(5, 1, 1)) == [0, 1, 2, 3, 4]


def test_an_optimizer_steps_one_model_only():
    first, second = sentiment.Model(seed=1), sentiment.Model(seed=2)
    optimizer = sentiment.Optimizer("adam")
    first.train_step([TREE], optimizer)
    before = copy_params(second)
    with pytest.raises(ValueError, match="steps another Model's parameters"):
        second.train_step([TREE], optimizer)
    for name, values in second.params.items():
        assert np.array_equal(values, before[name]), name
    first.train_step([TREE], optimizer)  # still the first model's


def test_a_failed_step_changes_no_parameter():
    model = sentiment.Model()
    before = copy_params(model)
    with pytest.raises(ValueError, match="example:1: "):
        model.train_step([TREE, {"Leaf": {"word": "x", "label": 1}}], sentiment.Optimizer("sgd"))
    for name, values in model.params.items():
        assert np.array_equal(values, before[name]), name


def test_threads_sharing_one_model_take_turns(tmp_path):
    """Eight threads infer on one model while another loads new parameters:
    every answer is the old model's or the new one's, never a mixture."""
    model = sentiment.Model(seed=1)
    old = model.infer([TREE])
    sentiment.Model(seed=2).save(str(tmp_path / "new.st"))
    new = sentiment.Model(seed=2).infer([TREE])
    assert old != new
    answers, failures = [], []

    def infer_many():
        try:
            for _ in range(25):
                answers.append(model.infer([TREE, LEAF])[0])
        except Exception as error:  # noqa: BLE001 (reported below)
            failures.append(error)

    threads = [threading.Thread(target=infer_many) for _ in range(8)]
    for thread in threads:
        thread.start()
    model.load(str(tmp_path / "new.st"))
    for thread in threads:
        thread.join()
    assert failures == []
    assert len(answers) == 200
    assert all(answer in (old[0], new[0]) for answer in answers)
    assert model.infer([TREE]) == new


def test_threads_training_one_model_each_match_a_sequential_run():
    """Two models trained at once from two threads (the GIL released) end
    where the same steps taken one after the other end."""
    def train(model, optimizer):
        for step in range(1, 6):
            model.train_step([TREE, LEAF], optimizer, seed=step)

    alone = sentiment.Model(seed=3)
    train(alone, sentiment.Optimizer("adam"))
    models = [sentiment.Model(seed=3) for _ in range(2)]
    threads = [threading.Thread(target=train, args=(m, sentiment.Optimizer("adam"))) for m in models]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for model in models:
        for name, values in alone.params.items():
            assert np.array_equal(model.params[name], values), name


def test_two_generated_modules_in_one_process_decode_as_the_command_line(tmp_path):
    """seq2seq (a loop and a beam search on computed values: the interleaved
    runtime) imported beside sentiment, its decodings those of its driver."""
    lines = [{"src": src, "tgt": src[::-1], "greedy": True, "beam": True}
             for src in ([2, 3, 4], [5, 6, 7, 8, 9], [19, 2, 11, 4, 8, 8, 3])]
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(line) + "\n" for line in lines))
    model = seq2seq.Model(seed=4)
    model.save(str(tmp_path / "model.st"))
    cli = subprocess.run([os.environ["FOLDC_SEQ2SEQ_DRIVER"], "infer", "--data", str(data),
                          "--params", str(tmp_path / "model.st")],
                         check=True, capture_output=True, text=True).stdout
    assert model.infer(lines) == [json.loads(line)["output"] for line in cli.splitlines()]
    assert isinstance(sentiment.Model().infer([LEAF])[0][0], float)
    assert seq2seq.Optimizer is not sentiment.Optimizer
