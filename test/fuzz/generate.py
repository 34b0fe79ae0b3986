#!/usr/bin/env python3
"""Random well-typed Fold programs and data of matching shape.

  generate.py SEED OUT_DIR     writes OUT_DIR/prog.fold and OUT_DIR/prog.jsonl
                               (and OUT_DIR/prog_SEED.h when the program
                               imports host functions from C++)
  generate.py -                the same for every line "SEED OUT_DIR" of
                               standard input (one interpreter for a run of
                               thousands: starting one costs more than a
                               program)

The program is a model over one example type that uses all of the language
(test/fuzz/coverage.py checks it against the compiler's builtin tables):
records, a union with several variants, optionals, a recursive data type
walked by a recursive def, every combinator, lambdas with captures, match and
if in tensor and host positions, decisions on computed values (if on a
computed scalar, loop, item, beam, top_k: in forms whose loss stays continuous, so
that the gradient check holds), element-wise builtins, reductions, softmaxes,
slices, concat, matrices (along an axis, subscripts, transpose, reshape,
outer, a product with a glorot matrix), graph primitives (range, gather,
segment sums), zip, ngrams, nth, dropout, stop_gradient, defs of tensors
only (inlined) and destructuring lets, consts, logical operators,
embeddings, fc/lstm/gru layers, user-defined layers (instances, nested in
other definitions), params of every initialiser used as values, weights
passed as arguments (in tuples, as column slices, chosen by a host
condition),
constant-only subexpressions, losses (xent, mse, sigmoid_xent), metrics,
and host functions imported from a C++ header. Every tensor expression is
built for a known width, so the program type-checks by construction. The data
has empty lists, long sequences, and deep and unbalanced trees (bounded).
"""
import json
import os
import random
import sys

V = 6          # vocabulary of the ids in the data
CLASSES = 3    # xent labels
UNARY = ["tanh", "sigmoid", "softplus", "elu", "silu", "square"]


class Program:
    def __init__(self, rng):
        self.rng = rng
        self.decls = []      # top-level declarations after the data types
        self.layers = {}     # key -> name, so a layer of one shape is reused sometimes
        self.defs = []
        self.params = {}
        self.matrices = {}   # (rows, cols) -> name of a glorot matrix param
        self.counter = 0
        # Host functions of prog_SEED.h, file and functions named after the
        # seed: a fuzz group's programs share a translation unit and its
        # include path, and these are not namespaced.
        self.imports = rng.random() < 0.4
        self.host_prefix = ""

    def fresh(self, prefix):
        self.counter += 1
        return f"{prefix}{self.counter}"

    # ------------------------------------------------------------ declarations
    def layer(self, kind, a, b, act=None):
        key = (kind, a, b, act)
        if key in self.layers and self.rng.random() < 0.6:
            return self.layers[key]
        name = self.fresh(kind[:3])
        if kind == "embedding":
            self.decls.append(f"layer {name} = embedding({a}, {b});")
        elif kind == "fc":
            self.decls.append(f"layer {name} = fc({a} -> {b}, act: {act});")
        else:
            self.decls.append(f"layer {name} = {kind}({a} -> {b});")
        self.layers[key] = name
        return name

    def param(self, n):
        if n not in self.params:
            name = self.fresh("p")
            # No constant vectors: max/min of a vector whose elements tie is a
            # kink, where finite differences halve the gradient (seed 5377).
            inits = ["uniform(-0.5, 0.5)", "normal(0.2)"] + (
                ["constant(0.3)", "zeros", "ones"] if n == 1 else [])
            init = self.rng.choice(inits)
            self.decls.append(f"param {name}: f32[{n}] = {init};")
            self.params[n] = name
        return self.params[n]

    def top_k(self, n, d, scope):
        """The k largest of a wider vector, which is continuous in it.

        Offsets 0.1 apart break exact ties: a vector computed from zeros (a
        `zeros` param through fc, a reduce over no words) has equal elements,
        and at a tie of three or more the analytic gradient is one of several
        valid ones that finite differences along one axis cannot confirm
        (seed 10976). Ties of two are still met on the way and are kinks the
        gradient check recognises.
        """
        m = n + self.rng.randint(0, 2)
        offsets = ", ".join(f"{0.1 * i:.1f}" for i in range(m))
        return f"top_k({n}, {self.tensor(m, d, scope)} + vector({m}, [{offsets}])).0"

    def matrix_param(self, m, n):
        """A glorot-initialised f32[m, n] (glorot is for rank >= 2)."""
        if (m, n) not in self.matrices:
            name = self.fresh("W")
            self.decls.append(f"param {name}: f32[{m}, {n}] = glorot;")
            self.matrices[(m, n)] = name
        return self.matrices[(m, n)]

    # ------------------------------------------------------------ host values
    def host_int(self, scope):
        """An int in [0, V): a literal, a field, a binder's field."""
        options = [str(self.rng.randrange(V)), "ONE"] + scope.get("ints", [])
        if "example" in scope:
            options += ["s.k", "s.rec.id"]
        if self.imports:
            options.append(f"{self.host_prefix}wrap({self.rng.choice(options)})")
        return self.rng.choice(options)

    def host_float(self, scope):
        options = ["0.5", "-1.25", "HALF"] + scope.get("floats", [])
        if "example" in scope:
            options += ["s.x", "s.rec.w", "(s.x * 0.5 + 1.0)"]
            if self.imports:
                options.append(f"{self.host_prefix}mean_of(s.xs)")
        return self.rng.choice(options)

    # ------------------------------------------------------------ tensors
    def tensor(self, n, depth, scope):
        """A Fold expression of type f32[n]."""
        lets = [v for v, w in scope.get("lets", []) if w == n]
        if depth <= 0:
            leaves = [f"{self.layer('embedding', V, n)}({self.host_int(scope)})",
                      f"ones({n}) * {self.host_float(scope)}", self.param(n)] + lets
            return self.rng.choice(leaves)
        d = depth - 1
        r = self.rng
        if "example" not in scope:  # inside a def over a tree: no `s`
            return f"{r.choice(UNARY)}({self.tensor(n, 0, scope)})"
        choices = [
            lambda: f"{r.choice(UNARY)}({self.tensor(n, d, scope)})",
            lambda: f"log(square({self.tensor(n, d, scope)}) + 1.0)",
            lambda: f"sqrt(square({self.tensor(n, d, scope)}) + 1.0)",
            lambda: f"exp({self.tensor(n, d, scope)} * 0.1)",
            lambda: f"abs({self.tensor(n, d, scope)} + 3.0)",
            lambda: f"({self.tensor(n, d, scope)} {r.choice(['+', '-', '*'])} {self.tensor(n, d, scope)})",
            lambda: f"({self.tensor(n, d, scope)} / (square({self.tensor(n, d, scope)}) + 1.0))",
            lambda: f"({self.tensor(n, d, scope)} * {self.host_float(scope)})",
            lambda: f"({self.tensor(n, d, scope)} - {self.scalar(d, scope)})",
            lambda: self.fc(n, d, scope),
            lambda: self.across(n, d, scope),
            lambda: self.fold(n, d, scope),
            lambda: self.recurrent(n, d, scope),
            lambda: self.match_item(n, d, scope),
            lambda: self.branch(n, d, scope),
            lambda: self.optional(n, d, scope),
            lambda: self.tree(n, d, scope),
            lambda: self.zip_with(n, d, scope),
            lambda: self.reduce(n, d, scope),
            lambda: f"softmax({self.tensor(n, d, scope)})",
            lambda: f"log_softmax({self.tensor(n, d, scope)}) * 0.1",
            lambda: f"vector({n}, [{', '.join(self.host_float(scope) for _ in range(n))}])",
            lambda: f"(tanh(ones({n}) * {r.choice(['0.5', '2.0'])}) + zeros({n}))",
            lambda: f"{self.param(n)} * {self.tensor(n, d, scope)}",
            lambda: self.call(n, d, scope),
            lambda: self.decision(n, d, scope),
            lambda: self.top_k(n, d, scope),
            lambda: self.matrix(n, d, scope),
            lambda: self.graph(n, d, scope),
            lambda: self.pairs(n, d, scope),
            lambda: self.inlined(n, d, scope),
            lambda: self.product(n, d, scope),
            lambda: self.weights_as_args(n, d, scope),
            lambda: self.instance(n, d, scope),
            lambda: f"dropout({self.tensor(n, d, scope)}, {r.choice(['0.0', '0.25'])})",
            # a kink at 0, kept away from the initial values as fc's relu is
            lambda: f"relu({self.tensor(n, d, scope)} + 2.0)",
            # no parameter behind it: the check's finite differences agree
            lambda: f"({self.tensor(n, d, scope)} + stop_gradient(ones({n}) * {self.host_float(scope)}))",
        ]
        if n >= 2:
            choices.append(lambda: self.concat(n, d, scope))
            choices.append(lambda: f"one_hot({n}, s.k)")  # k < 2 <= n
        choices.append(lambda: self.slice(n, d, scope))
        if lets:
            choices.append(lambda: r.choice(lets))
        return r.choice(choices)()

    def scalar(self, depth, scope):
        """An f32 scalar expression."""
        m = self.rng.randint(1, 3)
        return self.rng.choice([
            f"sum({self.tensor(m, depth, scope)})",
            f"max({self.tensor(m, depth, scope)})",
            f"dot({self.tensor(m, depth, scope)}, {self.tensor(m, depth, scope)})",
            f"({self.tensor(m, depth, scope)})[0]",
            f"tensor({self.host_float(scope)})",
            self.host_result(depth, scope),
        ])

    def host_result(self, depth, scope):
        """A def declaring an f32 result that returns a host number: inlined
        (an expression body) or called (an `if` keeps it out of line)."""
        name = self.fresh("lift")
        m = self.rng.randint(1, 3)
        body = self.rng.choice(["v", "if v > 0.0 { v } else { 2.0 }"])
        self.defs.append(f"def {name}(x: f32[{m}], v: float) -> f32 = {body};")
        return f"({name}({self.tensor(m, depth, scope)}, {self.host_float(scope)}) * sum({self.tensor(m, depth, scope)}))"

    def fc(self, n, d, scope):
        m = self.rng.randint(1, 4)
        act = self.rng.choice(["tanh", "sigmoid", "none", "relu"])
        inner = self.tensor(m, d, scope)
        if act == "relu":  # keep the kink away from the initial values
            inner = f"({inner} + 2.0)"
        return f"{self.layer('fc', m, n, act)}({inner})"

    def product(self, n, d, scope):
        m = self.rng.randint(1, 3)
        return f"({self.tensor(m, d, scope)} @ {self.matrix_param(m, n)})"

    def pairs(self, n, d, scope):
        """f32[n] through the list combinators over pairs: zip, ngrams, nth."""
        r = self.rng
        inner = dict(scope, ints=scope.get("ints", []) + ["p.0"], floats=scope.get("floats", []) + ["p.1"])
        body = self.tensor(n, max(d - 1, 0), inner)
        bigram = dict(scope, ints=scope.get("ints", []) + ["g.0", "g.1"])
        return r.choice([
            f"sum(map(|p| {body} * p.1, zip(s.ids[:length(s.xs)], s.xs[:length(s.ids)])))",
            f"mean(map(|g| {self.tensor(n, max(d - 1, 0), bigram)}, ngrams(2, s.ids)))",
            # never empty: the index is in range
            f"nth({r.choice(['0', 'length(s.ids)'])}, map(|w| {self.each_word(n, d, scope)}, concat([s.k], s.ids)))",
        ])

    def pair_def(self, n):
        """A def of tensors only (inlined where it is called) returning a
        pair: its name and the width of its first argument."""
        name = self.fresh("pair")
        m = self.rng.randint(1, 3)
        join = self.layer("fc", m, n, "tanh")
        self.defs.append(f"def {name}(x: f32[{m}], y: f32[{n}]) -> (f32[{n}], f32[{n}]) {{\n"
                         f"  return ({join}(x) * y, tanh(y));\n}}")
        return name, m

    def weights_as_args(self, n, d, scope):
        """A cell written once taking its weights as arguments (inlined: its
        products read them in place), given them directly, in a tuple, as
        columns of a wider matrix, or chosen by a host condition."""
        r = self.rng
        name = self.fresh("cell")
        m = r.randint(1, 3)
        weights, bias = self.matrix_param(m, n), self.param(n)
        form = r.random()
        if form < 0.2:
            wide = self.matrix_param(m, n + 2)
            self.defs.append(f"def {name}(x: f32[{m}], W: f32[{m}, {n + 2}], b: f32[{n}]) -> f32[{n}] = "
                             f"tanh(x @ W[:, 1:{n + 1}] + b);")
            return f"{name}({self.tensor(m, d, scope)}, {wide}, {bias})"
        if form < 0.35 and "example" in scope:
            other = self.fresh("W")
            self.decls.append(f"param {other}: f32[{m}, {n}] = uniform(-0.5, 0.5);")
            self.defs.append(f"def {name}(x: f32[{m}], W: f32[{m}, {n}], b: f32[{n}]) -> f32[{n}] = "
                             f"tanh(x @ W + b);")
            return (f"{name}({self.tensor(m, d, scope)}, "
                    f"if s.flag {{ {weights} }} else {{ {other} }}, {bias})")
        if form < 0.6:
            self.defs.append(f"def {name}(x: f32[{m}], W: f32[{m}, {n}], b: f32[{n}]) -> f32[{n}] = "
                             f"tanh(x @ W + b);")
            return f"{name}({self.tensor(m, d, scope)}, {weights}, {bias})"
        self.defs.append(f"def {name}(x: f32[{m}], wb: (f32[{m}, {n}], f32[{n}])) -> f32[{n}] = "
                         f"tanh(x @ wb.0 + wb.1);")
        return f"{name}({self.tensor(m, d, scope)}, ({weights}, {bias}))"

    def instance(self, n, d, scope):
        """An instance of a user-defined layer: a definition with size
        constants, an activation constant, a param of its own and an fc
        inside, sometimes itself inside another definition (two instances)."""
        r = self.rng
        cell = self.fresh("Cell")
        m = r.randint(1, 3)
        self.decls.append(
            f"layer {cell}(I: int, O: int, act: activation = tanh)(x: f32[I]) -> f32[O] {{\n"
            f"  param W: f32[I, O] = uniform(-0.5, 0.5);\n"
            f"  layer inner = fc(O -> O);\n"
            f"  return inner(act(x @ W)) * 0.5;\n}}")
        definition, args = cell, f"{m}, {n}, act: {r.choice(['tanh', 'sigmoid', 'none'])}"
        if r.random() < 0.4:
            definition = self.fresh("Pair")
            self.decls.append(
                f"layer {definition}(I: int, O: int)(x: f32[I]) -> f32[O] {{\n"
                f"  layer a = {cell}(I, O);\n  layer b = {cell}(I -> O, act: sigmoid);\n"
                f"  return a(x) + b(x);\n}}")
            args = f"{m} -> {n}"
        name = self.fresh("inst")
        self.decls.append(f"layer {name} = {definition}({args});")
        return f"{name}({self.tensor(m, d, scope)})"

    def inlined(self, n, d, scope):
        name, m = self.pair_def(n)
        return f"{name}({self.tensor(m, d, scope)}, {self.tensor(n, d, scope)}).{self.rng.randrange(2)}"

    def concat(self, n, d, scope):
        a = self.rng.randint(1, n - 1)
        return f"concat({self.tensor(a, d, scope)}, {self.tensor(n - a, d, scope)})"

    def slice(self, n, d, scope):
        m = n + self.rng.randint(1, 3)
        lo = self.rng.randint(0, m - n)
        return f"({self.tensor(m, d, scope)})[{lo}:{lo + n}]"

    def matrix(self, n, d, scope):
        """f32[n] by way of a matrix: reductions, softmaxes along an axis,
        concat along an axis, subscripts, transpose, reshape, outer."""
        r = self.rng
        m = r.randint(1, 3)
        mat = f"reshape({self.tensor(m * n, d, scope)}, {m}, {n})"  # f32[m, n]
        i = r.randrange(m)
        return r.choice([
            f"sum({mat}, axis: 0)",
            f"{r.choice(['mean', 'max', 'min'])}({mat}, axis: {r.choice(['0', '-2'])})",
            f"mean(transpose({mat}))",
            f"transpose({mat})[:, {i}]",
            f"softmax({mat}, axis: 0)[{i}]",
            f"log_softmax(transpose({mat}))[:, {i}] * 0.1",
            f"outer({self.tensor(n, d, scope)}, {self.tensor(m, d, scope)})[:, {i}]",
            f"concat({mat}, reshape({self.tensor(n, d, scope)}, 1, {n}), axis: 0)[{m}]",
            f"({mat})[{i}, :]",
        ])

    def graph(self, n, d, scope):
        """f32[n] by way of the graph primitives over the word ids."""
        r = self.rng
        xs = f"map(|w| {self.each_word(n, d, scope)}, s.ids)"
        return r.choice([
            f"sum({r.choice(['segment_sum', 'segment_mean', 'segment_max'])}({xs}, s.ids, {V}))",
            f"sum(gather({xs}, reverse(range(length(s.ids)))))",
            f"mean(gather({xs}, range(length(s.ids))[0:1]))",
        ])

    def each_word(self, n, d, scope):
        """A lambda body over a word id `w` that captures the scope."""
        inner = dict(scope, ints=scope.get("ints", []) + ["w"])
        return self.tensor(n, max(d - 1, 0), inner)

    def across(self, n, d, scope):
        how = self.rng.choice(["sum", "mean", "max", "min"])
        return f"{how}(map(|w| {self.each_word(n, d, scope)}, s.ids))"

    def fold(self, n, d, scope):
        join = self.layer("fc", 2 * n, n, "tanh")
        return f"fold(|acc, w| {join}(concat(acc, {self.each_word(n, d, scope)})), {self.tensor(n, 0, scope)}, s.ids)"

    def recurrent(self, n, d, scope):
        m = self.rng.randint(1, 3)
        xs = f"map(|w| {self.each_word(m, d, scope)}, s.ids)"
        if self.rng.random() < 0.5:
            cell = self.layer("lstm", m, n)
            part = self.rng.choice(["1.0", "1.1"])
            return f"rnn({cell}, (zeros({n}), zeros({n})), {xs}).{part}"
        cell = self.layer("gru", m, n)
        return f"fold(|st, x| {cell}(x, st).0, zeros({n}), {xs})"

    def zip_with(self, n, d, scope):
        inner = dict(scope, ints=scope.get("ints", []) + ["w"], floats=scope.get("floats", []) + ["x"])
        body = self.tensor(n, max(d - 1, 0), inner)
        return f"sum(zip_with(|w, x| {body} * x, s.ids[:length(s.xs)], s.xs[:length(s.ids)]))"

    def reduce(self, n, d, scope):
        return f"reduce(|a, b| a + b * 0.5, zeros({n}), map(|w| {self.each_word(n, d, scope)}, s.ids))"

    def match_item(self, n, d, scope):
        arms = [
            f"A a => {self.tensor(n, d, dict(scope, ints=scope.get('ints', []) + ['a.id']))}",
            f"B b => {self.tensor(n, d, dict(scope, floats=scope.get('floats', []) + ['b.w']))} * b.w",
        ]
        if self.rng.random() < 0.5:
            arms.append(f"C => {self.tensor(n, d, scope)}")
        else:
            arms.append(f"_ => {self.tensor(n, 0, scope)}")
        self.rng.shuffle(arms)
        return "match s.item { " + ", ".join(arms) + " }"

    def branch(self, n, d, scope):
        cond = self.rng.choice(["s.flag", "s.k > 0", "length(s.ids) > 2", "s.x < 0.0",
                                "!s.flag && s.k == 0", "s.flag || !(s.x >= 0.5)"])
        return f"if {cond} {{ {self.tensor(n, d, scope)} }} else {{ {self.tensor(n, d, scope)} }}"

    def optional(self, n, d, scope):
        some = self.tensor(n, d, dict(scope, ints=scope.get("ints", []) + ["o"]))
        return f"match s.opt {{ Some o => {some}, None => {self.tensor(n, 0, scope)} }}"

    def tree(self, n, d, scope):
        name = self.fresh("walk")
        join = self.layer("fc", 2 * n, n, "tanh")
        leaf = self.tensor(n, min(d, 1), {"ints": ["l.w"]})
        self.defs.append(
            f"def {name}(t: Tree) -> f32[{n}] = match t {{\n"
            f"  Leaf l => {leaf},\n"
            f"  Node nd => {join}(concat({name}(nd.l), {name}(nd.r))),\n}};")
        return f"match s.tree {{ Some t => {name}(t), None => zeros({n}) }}"

    def decision(self, n, d, scope):
        """A value whose unfolding waits on a computed one. The loss stays
        continuous (a jump would defeat finite differences): a leaky branch
        on a computed scalar (both sides 0 at the boundary), an argmax
        choosing between two spellings of one value, or a loop whose step
        keeps the state's value while a computed flag decides how often it
        runs."""
        r = self.rng
        kind = r.choice(["leaky", "argmax", "loop"])
        y = self.tensor(n, d, scope)
        if kind == "leaky":
            c = self.scalar(max(d - 1, 0), scope)
            return f"(if {c} > 0.0 {{ {y} * {c} }} else {{ {y} * ({c} * 0.5) }})"
        if kind == "argmax":
            k = r.randint(1, 3)
            z = self.tensor(k, max(d - 1, 0), scope)
            cond = r.choice([f"argmax({z}) == 0 || s.flag", f"argmax({z}) == 0 && s.k > 0",
                             f"!(argmax({z}) != 0)"])
            return f"(if {cond} {{ {y} * 2.0 }} else {{ {y} + {y} }})"
        probe = self.layer("fc", n, 1, "none")
        bound = r.choice(["1", "3", "length(s.ids)", "s.k + 2"])
        return f"loop(|st| (sum({probe}(st)) > 0.0, 0, st + tanh(st) * 0.0), {y}, {bound}).1"

    def call(self, n, d, scope):
        """A def that is not inlined (it takes the example)."""
        name = self.fresh("part")
        body = self.tensor(n, d, {"example": True})
        self.defs.append(f"def {name}(s: S) -> f32[{n}] = {body};")
        return f"{name}(s)"

    # ------------------------------------------------------------ the model
    def model(self):
        r = self.rng
        scope = {"lets": [], "example": True}
        lines = []
        for _ in range(r.randint(1, 4)):
            n = r.randint(1, 4)
            if r.random() < 0.2:  # a destructuring let
                name, m = self.pair_def(n)
                a, b = self.fresh("v"), self.fresh("v")
                lines.append(f"  let ({a}, {b}) = {name}({self.tensor(m, r.randint(0, 2), scope)}, "
                             f"{self.tensor(n, r.randint(0, 2), scope)});")
                scope["lets"] += [(a, n), (b, n)]
                continue
            v = self.fresh("v")
            lines.append(f"  let {v} = {self.tensor(n, r.randint(1, 3), scope)};")
            scope["lets"].append((v, n))
        h = self.fresh("h")
        lines.append(f"  let {h} = {self.tensor(CLASSES, r.randint(1, 3), scope)};")
        lines.append(f"  loss xent({h}, s.label);")
        # Most lets reach a loss, so that the gradient check covers them.
        for v, _ in scope["lets"]:
            if r.random() < 0.35:
                lines.append(f"  loss mse(({v})[0], s.x) * 0.1;")
            elif r.random() < 0.25:
                lines.append(f"  loss sigmoid_xent(({v})[0], {r.choice(['1.0', '0.0', 's.rec.w * 0.5 + 0.5'])});")
            elif r.random() < 0.6:
                lines.append(f"  loss mean(square({v})) * 0.01;")
        lines.append(f"  metric hit = argmax({h}) == s.label;")
        if r.random() < 0.3:
            lines.append("  metric long = length(s.ids) > 3;")
        if r.random() < 0.3:
            lines.append(f"  metric pick = item(argmax({h}));")
        if r.random() < 0.2:
            step = self.layer("fc", CLASSES, CLASSES, "tanh")
            lines.append(f"  metric decoded = length(beam(|st, t| (log_softmax({step}(st)), {step}(st)), "
                         f"{h}, 0, 1, {r.choice(['1', '2', 's.k + 1'])}, 4));")
        outputs = [h] + [v for v, _ in scope["lets"][: r.randint(0, 2)]]
        lines.append(f"  output {outputs[0] if len(outputs) == 1 else '(' + ', '.join(outputs) + ')'};")
        return "model m(s: S) {\n" + "\n".join(lines) + "\n}"

    def header(self):
        """prog_SEED.h: the host functions a program imports."""
        p = self.host_prefix
        return (f"// Host functions of the program of seed {p[1:-1]}.\n#pragma once\n"
                "#include <cstdint>\n#include <vector>\n\n"
                f"inline int64_t {p}wrap(int64_t i) {{ return ((i % {V}) + {V}) % {V}; }}\n"
                f"inline double {p}mean_of(const std::vector<double> &xs) {{\n"
                "  double sum = 0;\n  for (double x : xs)\n    sum += x;\n"
                "  return xs.empty() ? 0.0 : sum / double(xs.size());\n}\n")

    def source(self, seed):
        self.host_prefix = f"s{seed}_"
        body = self.model()  # first: it declares the layers, params and defs it uses
        header = [
            f"// Generated by test/fuzz/generate.py, seed {seed}.",
            "data Rec = { id: int, w: float };",
            "data Item = A { id: int } | B { w: float, ids: [int] } | C;",
            "data Tree = Leaf { w: int } | Node { l: Tree, r: Tree, w: int };",
            "data S = { ids: [int], xs: [float], k: int, x: float, flag: bool, label: int,",
            "           opt: int?, item: Item, tree: Tree?, rec: Rec };",
            "const ONE = 1;",
            "const HALF = 0.5;",
        ] + ([f'import "prog_{seed}.h";'] if self.imports else [])
        return "\n".join(header + self.decls + self.defs + [body]) + "\n"


def tree(rng, depth):
    if depth <= 0 or rng.random() < 0.3:
        return {"Leaf": {"w": rng.randrange(V)}}
    # Unbalanced on purpose: one side often much deeper than the other.
    left = tree(rng, depth - 1)
    right = tree(rng, rng.randint(0, depth - 1))
    return {"Node": {"l": left, "r": right, "w": rng.randrange(V)}}


def example(rng):
    n = rng.choice([0, 0, 1, 2, 3, 5, 12])
    item = rng.choice([
        {"A": {"id": rng.randrange(V)}},
        {"B": {"w": round(rng.uniform(-2, 2), 3), "ids": [rng.randrange(V) for _ in range(rng.randint(0, 3))]}},
        {"C": {}},
    ])
    return {
        "ids": [rng.randrange(V) for _ in range(n)],
        "xs": [round(rng.uniform(-2, 2), 3) for _ in range(rng.randint(max(0, n - 1), n + 1))],
        "k": rng.randrange(2),
        "x": round(rng.uniform(-2, 2), 3),
        "flag": rng.random() < 0.5,
        "label": rng.randrange(CLASSES),
        "opt": rng.randrange(V) if rng.random() < 0.6 else None,
        "item": item,
        "tree": tree(rng, rng.randint(0, 7)) if rng.random() < 0.8 else None,
        "rec": {"id": rng.randrange(V), "w": round(rng.uniform(-1, 1), 3)},
    }


def write_program(seed, out):
    rng = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    program = Program(rng)
    with open(os.path.join(out, "prog.fold"), "w") as f:
        f.write(program.source(seed))
    if program.imports:
        with open(os.path.join(out, f"prog_{seed}.h"), "w") as f:
            f.write(program.header())
    with open(os.path.join(out, "prog.jsonl"), "w") as f:
        for _ in range(rng.randint(2, 6)):
            f.write(json.dumps(example(rng)) + "\n")


def main():
    if sys.argv[1:] == ["-"]:
        for line in sys.stdin:
            seed, out = line.split(maxsplit=1)
            write_program(int(seed), out.strip())
    else:
        write_program(int(sys.argv[1]), sys.argv[2])


if __name__ == "__main__":
    main()
