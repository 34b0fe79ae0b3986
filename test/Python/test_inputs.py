"""Examples given from Python as a user would give them: trees deeper than
Python's recursion limit (as dicts and as JSON strings), numpy numbers and
arrays, one
dict where a list belongs, a lone surrogate, an empty batch. Each is either
read as the command line reads it or a Python exception naming the example
and what to do; none crashes the interpreter.

ctest runs it with FOLDC_PYTHON_PATH (the modules' folder) set.
"""
import json
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.environ["FOLDC_PYTHON_PATH"])
import sentiment  # noqa: E402

LEAF = {"Leaf": {"word": 3, "label": 1}}


def deep_tree(depth):
    """A tree `depth` nodes deep (a left spine), built without recursion."""
    tree = LEAF
    for i in range(depth):
        tree = {"Node": {"left": tree, "right": {"Leaf": {"word": i % 50, "label": 2}}, "label": i % 5}}
    return tree


def deep_json(depth):
    return ('{"Node": {"left": ' * depth + json.dumps(LEAF) +
            ', "right": {"Leaf": {"word": 1, "label": 2}}, "label": 3}}' * depth)


# Under ThreadSanitizer, data tens of thousands of levels deep fails its
# unwinder (10^5) or takes its shadow memory past the machine's (18 GB at
# 25,000): its pass (scripts/sanitize.sh --threads) sets FOLDC_SKIP_DEEP.
@pytest.mark.skipif(bool(os.environ.get("FOLDC_SKIP_DEEP")), reason="FOLDC_SKIP_DEEP (TSan)")
@pytest.mark.parametrize("depth", [25000, 100000])
def test_a_deep_tree_as_a_json_string_is_read_as_the_command_line_reads_it(depth):
    model = sentiment.Model()
    text = deep_json(depth)
    [output] = model.infer([text])
    assert len(output) == 5 and abs(sum(output) - 1) < 1e-5
    result = model.eval([text])
    assert result["examples"] == 1 and np.isfinite(result["loss"])
    step = model.train_step([text], sentiment.Optimizer("adagrad", lr=0.05))
    assert np.isfinite(step["loss"])


def test_a_deep_tree_as_dicts_needs_no_python_recursion():
    model = sentiment.Model()
    tree = deep_tree(2000)  # json.dumps of this raises RecursionError
    with pytest.raises(RecursionError):
        json.dumps(tree)
    [from_dicts] = model.infer([tree])
    # The same tree as text, written without json.dumps.
    text = json.dumps(LEAF)
    for i in range(2000):
        text = ('{"Node": {"left": ' + text + ', "right": {"Leaf": {"word": %d, "label": 2}}, '
                '"label": %d}}' % (i % 50, i % 5))
    [from_text] = model.infer([text])
    assert from_dicts == from_text
    assert model.eval([tree])["examples"] == 1


def test_numpy_numbers_are_ints_and_floats():
    model = sentiment.Model()
    plain = model.infer([LEAF])
    for word, label in [(np.int64(3), np.int32(1)), (np.uint8(3), np.int16(1))]:
        assert model.infer([{"Leaf": {"word": word, "label": label}}]) == plain


def test_numpy_arrays_are_lists():
    import seq2seq
    model = seq2seq.Model(seed=2)
    plain = {"src": [3, 4, 5], "tgt": [6, 7], "greedy": True, "beam": False}
    arrays = {"src": np.array([3, 4, 5], dtype=np.int64), "tgt": np.array([6, 7], dtype=np.int32),
              "greedy": np.bool_(True), "beam": False}
    assert model.infer([arrays]) == model.infer([plain])
    assert model.eval([arrays]) == model.eval([plain])
    with pytest.raises(ValueError, match="example:0: src\\[0\\]: expected an integer, found 3.5"):
        model.infer([dict(arrays, src=np.array([3.5, 4.5]))])


def test_one_dict_where_a_list_belongs_says_so():
    with pytest.raises(TypeError, match="expected a list of examples, found one dict; pass \\[example\\]"):
        sentiment.Model().infer(LEAF)


def test_a_lone_surrogate_is_a_data_error_naming_the_example_and_path():
    bad = {"Leaf": {"word": 3, "label": 1, "\ud800": 1}}
    # DataError is a ValueError (with two generated modules in one process,
    # it is the class of the one imported last).
    with pytest.raises(ValueError, match="example:1: Leaf: a str that is not valid Unicode"):
        sentiment.Model().infer([LEAF, bad])


def test_a_value_of_no_json_shape_is_a_data_error_with_its_path():
    bad = {"Leaf": {"word": object(), "label": 1}}
    with pytest.raises(ValueError, match="example:0: Leaf.word: expected a dict, list, str, number, bool or None, found object"):
        sentiment.Model().infer([bad])


def test_an_empty_batch_is_an_error_for_eval_and_train_step_and_nothing_for_infer():
    model = sentiment.Model()
    assert model.infer([]) == []
    with pytest.raises(ValueError, match="no examples: the batch is empty"):
        model.eval([])
    with pytest.raises(ValueError, match="no examples: the batch is empty"):
        model.train_step([], sentiment.Optimizer())
