"""The foldc Python package (python/foldc): foldc.load compiles a model once
into the cache and loads it; `foldc run` runs its driver from the same
cache; errors are clear; Model.fit trains as `train` does, to the bit.

ctest runs it with FOLDC_PACKAGE_PATH (build/python), FOLDC_EXE (foldc),
FOLDC_CALCULATOR (examples/calculator) set. Each test has a cache of its
own (FOLDC_CACHE), so that what it says about compiling holds.
"""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

sys.path.insert(0, os.environ["FOLDC_PACKAGE_PATH"])
import foldc  # noqa: E402

EXAMPLE = os.path.join(os.environ["FOLDC_CALCULATOR"], "calculator.fold")
FOLDC = os.environ["FOLDC_EXE"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("data")
    text = subprocess.run([sys.executable, os.path.join(os.environ["FOLDC_CALCULATOR"],
                                                        "make_data.py"), "24", "5"],
                          capture_output=True, text=True, check=True).stdout
    (folder / "data.jsonl").write_text(text)
    return folder / "data.jsonl", [json.loads(line) for line in text.splitlines()]


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One cache for the tests that share the calculator's entry."""
    return str(tmp_path_factory.mktemp("cache"))


def in_new_process(code, cache, **env):
    """Runs `code` in a fresh interpreter with the package and FOLDC_CACHE;
    gives what it prints as JSON."""
    environment = dict(os.environ, FOLDC_CACHE=cache, **env)
    script = f"import sys; sys.path.insert(0, {os.environ['FOLDC_PACKAGE_PATH']!r})\n" \
             f"import json, foldc\n{code}"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=environment)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


LOAD_AND_INFER = f"""
m = foldc.load({EXAMPLE!r})
model = m.Model(seed=3)
out = model.infer([{{"expr": {{"Num": {{"value": 0.5}}}}, "result": 0.5}}])
print(json.dumps({{"compiled": foldc.last_load["compiled"], "out": out,
                  "module": foldc.last_load["module"]}}))
"""


def test_a_second_process_loads_from_the_cache_without_compiling(cache):
    first = in_new_process(LOAD_AND_INFER, cache)
    second = in_new_process(LOAD_AND_INFER, cache)
    assert first["compiled"] and not second["compiled"]
    assert first["out"] == second["out"] and first["module"] == second["module"]
    assert first["module"].startswith(cache)


def test_load_gives_the_drivers_outputs_and_fit_trains_as_train_does(cache, data, tmp_path):
    path, examples = data
    env = dict(os.environ, FOLDC_CACHE=cache)
    run = subprocess.run([FOLDC, "run", EXAMPLE, "train", "--data", str(path), "--epochs", "2",
                          "--batch-size", "4", "--seed", "2", "--optimizer", "adagrad", "--lr",
                          "0.05", "--save", str(tmp_path / "cli.st")],
                         capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    epochs = [json.loads(line) for line in run.stdout.splitlines()]
    os.environ["FOLDC_CACHE"] = cache
    m = foldc.load(EXAMPLE)
    model = m.Model(seed=2)
    results = model.fit(examples, epochs=2, batch_size=4,
                        optimizer=m.Optimizer("adagrad", lr=0.05), seed=2, progress=False)
    trained = m.Model()
    trained.load(str(tmp_path / "cli.st"))
    for name, values in trained.params.items():
        assert np.array_equal(model.params[name], values), name
    assert [r["train"] for r in results] == [e["train"] for e in epochs]
    infer = subprocess.run([FOLDC, "run", EXAMPLE, "infer", "--data", str(path), "--params",
                            str(tmp_path / "cli.st")], capture_output=True, text=True, env=env,
                           check=True)
    cli = [json.loads(line)["output"] for line in infer.stdout.splitlines()]
    np.testing.assert_allclose(trained.infer(examples), cli, rtol=1e-6)
    where = subprocess.run([FOLDC, "run", EXAMPLE, "--python"], capture_output=True, text=True,
                           env=env, check=True).stdout.strip()
    assert where == m.__file__


def test_two_processes_loading_a_new_model_compile_it_once(tmp_path):
    source = open(EXAMPLE).read().replace("const H = 32;", "const H = 16;")
    code = f"""
m = foldc.load(source={source!r}, name="calc16")
print(json.dumps({{"compiled": foldc.last_load["compiled"],
                  "out": m.Model(seed=1).infer([{{"expr": {{"Num": {{"value": 1.0}}}},
                                                  "result": 1.0}}])}}))
"""
    environment = dict(os.environ, FOLDC_CACHE=str(tmp_path))
    script = f"import sys; sys.path.insert(0, {os.environ['FOLDC_PACKAGE_PATH']!r})\n" \
             f"import json, foldc\n{code}"
    both = [subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=environment)
            for _ in range(2)]
    results = []
    for process in both:
        out, err = process.communicate()
        assert process.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert sorted(r["compiled"] for r in results) == [False, True], "one compiled, one waited"
    assert results[0]["out"] == results[1]["out"]


def test_a_corrupt_or_partial_entry_is_rebuilt_not_loaded(cache):
    module = in_new_process(LOAD_AND_INFER, cache)["module"]
    # A truncated module, as a full disk would leave (a new file: this
    # process may have the old one loaded).
    with open(module, "rb") as f:
        head = f.read(1000)
    with open(module + ".cut", "wb") as f:
        f.write(head)
    os.replace(module + ".cut", module)
    again = in_new_process(LOAD_AND_INFER, cache)
    assert again["compiled"]
    os.remove(os.path.join(os.path.dirname(module), "manifest.json"))  # a killed compile
    assert in_new_process(LOAD_AND_INFER, cache)["compiled"]


def test_an_unwritable_cache_is_an_error_naming_it(tmp_path):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    with pytest.raises(foldc.CacheError, match=f"'{blocked}/cache' cannot be written"):
        foldc.load(source=open(EXAMPLE).read(), name="uncached", cache=str(blocked / "cache"))


def test_compile_errors_carry_the_diagnostics(tmp_path):
    source = "const H = 4;\nmodel m(x: int) {\n  output y;\n}\n"
    with pytest.raises(foldc.CompileError) as error:
        foldc.load(source=source, name="broken", cache=str(tmp_path))
    text = str(error.value)
    assert text.startswith("broken.fold:3:10: error: ") and "^" in text, text
    first = error.value.diagnostics[0]
    assert (first.file, first.line, first.column, first.severity) == ("broken.fold", 3, 10, "error")
    with pytest.raises(FileNotFoundError):
        foldc.load(str(tmp_path / "missing.fold"), cache=str(tmp_path))


def test_a_missing_compiler_is_a_clear_error(tmp_path):
    code = f"""
foldc._config.COMPILE = ["/nonexistent/c++"]
try:
    foldc.load({EXAMPLE!r})
except foldc.CompileError as e:
    print(json.dumps(str(e)))
"""
    message = in_new_process(code, str(tmp_path))
    assert message.startswith("cannot run '/nonexistent/c++': not found"), message


def test_another_model_under_a_loaded_name_is_refused(cache):
    os.environ["FOLDC_CACHE"] = cache
    foldc.load(EXAMPLE)
    edited = open(EXAMPLE).read().replace("const H = 32;", "const H = 8;")
    with pytest.raises(ValueError, match="another model named 'calculator' is already loaded"):
        foldc.load(source=edited, name="calculator")
    assert foldc.load(EXAMPLE) is foldc.load(EXAMPLE)


def test_emit_gives_what_the_command_line_gives():
    plan = foldc.emit(EXAMPLE, "plan")
    cli = subprocess.run([FOLDC, EXAMPLE, "--emit=plan"], capture_output=True, text=True,
                         check=True).stdout
    assert plan == cli and "linear" in plan
    drawing = foldc.emit(EXAMPLE, "dot")
    assert "digraph" in str(drawing) and "<svg" in drawing._repr_svg_()
    with pytest.raises(ValueError, match="'plan', 'types' or 'dot', not 'cpp'"):
        foldc.emit(EXAMPLE, "cpp")


def test_a_header_import_cannot_find_is_a_compile_error(tmp_path):
    source = 'import "missing_header.h";\nconst H = 4;\n'
    with pytest.raises(foldc.CompileError) as error:
        foldc.load(source=source, name="imports", cache=str(tmp_path))
    assert error.value.diagnostics[0].line == 1 and "missing_header.h" in str(error.value)


def test_an_entry_of_another_foldc_version_is_not_used(cache):
    """The key covers foldc's version: another foldc compiles its own entry."""
    in_new_process(LOAD_AND_INFER, cache)
    other = in_new_process("foldc._config.VERSION = 'another'\n" + LOAD_AND_INFER, cache)
    assert other["compiled"]
