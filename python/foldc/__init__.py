"""foldc from Python: compile a Fold model and use it in this process.

    import foldc
    m = foldc.load("sentiment.fold")      # or foldc.load(source=TEXT, name="tagger")
    model = m.Model(seed=1)
    model.fit(train, dev=dev, epochs=3, batch_size=25, optimizer=m.Optimizer("adam"))
    model.infer(examples)

A compiled model is cached (FOLDC_CACHE, by default ~/.cache/foldc): loading
it again, in this process or another, compiles nothing. See docs/python.md.
"""
import importlib.util
import os
import shutil
import subprocess
import sys

from . import _build, _fit
from ._errors import CacheError, CompileError, Diagnostic

__all__ = ["load", "emit", "CompileError", "CacheError", "Diagnostic", "last_load"]

#: How the last load() went: {"name", "compiled" (bool), "module" (its path)}.
last_load = {}
_loaded = {}  # name -> (cache key, module): one module per name in a process


def load(path=None, *, source=None, name=None, import_dirs=(), cache=None):
    """Compiles the model of the .fold file `path` (or of the text `source`)
    unless the cache has it, and gives its module: Model, Optimizer,
    DataError, ParamsError, train_order, set_threads, as a module made by
    foldc_add_model(... PYTHON) has; Model also has fit(). `name` is the
    module's (by default the file's stem); `import_dirs` are searched for
    the C++ headers the model imports, after its own folder. Raises
    CompileError for a model that does not compile (its text is foldc's
    diagnostics), CacheError for a cache folder that cannot be written."""
    model = _build.Source(path, source, name, import_dirs)
    key = model.key()
    if model.name in _loaded:
        loaded_key, module = _loaded[model.name]
        if loaded_key != key:
            raise ValueError(
                f"another model named '{model.name}' is already loaded in this process (a Python "
                f"extension cannot be unloaded): give this one another name=, or restart")
        last_load.update(name=model.name, compiled=False, module=module.__file__)
        return module
    entry = _build.entry_for(model, key, cache)
    compiled = _build.build(model, entry)
    module = _import(model.name, entry.file(_build.module_file(model.name)))
    module.Model.fit = _fit.fit
    _loaded[model.name] = (key, module)
    last_load.update(name=model.name, compiled=compiled, module=module.__file__)
    return module


def _import(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    sys.modules[name] = module
    return module


def driver(path=None, *, source=None, name=None, import_dirs=(), cache=None):
    """The path of the model's command-line driver (`NAME_driver train ...`),
    compiled into the cache unless it is there."""
    model = _build.Source(path, source, name, import_dirs)
    entry = _build.entry_for(model, model.key(), cache)
    _build.build(model, entry, driver=True)
    return entry.file(_build.driver_file(model.name))


class Drawing:
    """Graphviz text that a notebook shows as a picture (dot -Tsvg)."""

    def __init__(self, text):
        self.text = text

    def __str__(self):
        return self.text

    def _repr_svg_(self):
        if not shutil.which("dot"):
            return None
        return subprocess.run(["dot", "-Tsvg"], input=self.text, capture_output=True, text=True,
                              check=True).stdout


def emit(path=None, what="plan", *, source=None, name=None, import_dirs=()):
    """What `foldc --emit=WHAT` prints for the model: "plan" (the batch
    plan), "types" (every declaration's type) or "dot" (the plan as a
    Graphviz drawing, shown as a picture in a notebook)."""
    if what not in ("plan", "types", "dot"):
        raise ValueError(f"emit: 'plan', 'types' or 'dot', not '{what}'")
    model = _build.Source(path, source, name, import_dirs)
    text = _build.emit(model, what)
    return Drawing(text) if what == "dot" else text
