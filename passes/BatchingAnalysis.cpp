// Lowering to kernels and unfolding steps (see BatchingAnalysis.h).
#include "passes/BatchingAnalysis.h"

#include "frontend/ASTPrinter.h"
#include "passes/Builtins.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>

namespace foldc {

namespace {

HostExprRef hostExpr(HostExpr::Kind kind, std::string text, TypeRef type,
                     std::vector<HostExprRef> operands = {}) {
  auto e = std::make_shared<HostExpr>();
  e->kind = kind;
  e->text = std::move(text);
  e->type = std::move(type);
  e->operands = std::move(operands);
  return e;
}

/// What lowering knows about a value.
struct AVal {
  enum class Kind { Host, Local, Handle, Tuple, Block, None } kind = Kind::None;
  std::string text;          ///< Host: source text; Handle: its name in the steps
  TypeRef type;
  int kernel = -1, value = -1; ///< Local: value `value` of kernel `kernel`
  int stage = 0;             ///< Local, Handle
  std::vector<AVal> elements; ///< Tuple
  std::shared_ptr<const BlockValue> block;
  bool constant = false;     ///< Host: a literal or const, folded into the kernel
  HostExprRef expr;          ///< Host: how unfolding computes it

  bool isTensorLike() const { return kind == Kind::Local || kind == Kind::Handle; }
  static AVal host(std::string text, TypeRef type, HostExprRef expr) {
    AVal v;
    v.kind = Kind::Host;
    v.text = std::move(text);
    v.type = std::move(type);
    v.expr = std::move(expr);
    return v;
  }
  /// A host value named `name` (a parameter, binder, loop element...).
  static AVal named(const std::string &name, const TypeRef &type) {
    return host(name, type, hostExpr(HostExpr::Kind::Name, name, type));
  }
  /// A host value code generation does not handle yet, shown as its source.
  static AVal unsupported(const std::string &source, const TypeRef &type) {
    return host(source, type, hostExpr(HostExpr::Kind::Unsupported, source, type));
  }
  static AVal constantValue(std::string text, TypeRef type) {
    AVal v = host(text, type, hostExpr(HostExpr::Kind::Literal, text, type));
    v.constant = true;
    return v;
  }
  static AVal field(const AVal &base, const std::string &field, const TypeRef &type) {
    return host(base.text + "." + field, type,
                hostExpr(HostExpr::Kind::Field, field, type, {base.expr}));
  }
  static AVal handle(std::string text, TypeRef type, int stage) {
    AVal v;
    v.kind = Kind::Handle;
    v.text = std::move(text);
    v.type = std::move(type);
    v.stage = stage;
    return v;
  }
};

/// An unfolding context: a body, an arm or a block applied by a combinator.
/// Its open kernels are indexed by stage. A kernel is instantiated (its step
/// placed) when a later step first uses one of its values, which also closes
/// it: later work at that stage goes into a new kernel, so every kernel's
/// inputs exist where it is instantiated. The rest are placed at the end.
struct Context {
  Context(std::string n, std::vector<UnfoldStep> *into) : name(std::move(n)), steps(into) {}
  std::string name;
  std::map<int, int> kernelAtStage;
  std::vector<UnfoldStep> *steps;
  int kernelsMade = 0;
  std::vector<int> pending; ///< created, not yet instantiated, in creation order
};

class Lowering {
public:
  explicit Lowering(const TypedProgram &program) : program_(program) {}

  BatchPlan run() {
    for (const DeclPtr &d : program_.module->decls)
      if (auto *fn = dyn_cast<FunctionDecl>(d.get())) {
        if (!fn->isModel() && inlinable(*fn)) {
          plan_.inlined.push_back(fn->name);
          continue;
        }
        lowerFunction(*fn);
      }
    mergeIdenticalKernels();
    return std::move(plan_);
  }

private:
  /// Kernels with the same code and parameters are one batching key.
  void mergeIdenticalKernels() {
    std::map<std::string, int> first;
    for (KernelPlan &k : plan_.kernels) {
      auto [it, inserted] = first.emplace(k.identity(), k.id);
      if (!inserted)
        k.sameAs = it->second;
    }
  }

  // ------------------------------------------------------------ inlining
  bool inlinable(const FunctionDecl &fn) {
    if (auto it = inlinable_.find(&fn); it != inlinable_.end())
      return it->second;
    inlinable_[&fn] = false; // recursion is never inlined
    bool ok = true;
    for (const Parameter &p : fn.params)
      ok &= !program_.bindingTypes.at(&p)->isHost();
    std::function<void(const Expr &)> visit = [&](const Expr &e) {
      switch (e.kind()) {
      case ExprKind::Match: case ExprKind::If: case ExprKind::Lambda: case ExprKind::List:
      case ExprKind::Accessor: case ExprKind::Pipe:
        ok = false;
        return;
      case ExprKind::Call: {
        auto &call = static_cast<const CallExpr &>(e);
        if (auto *name = dyn_cast<NameExpr>(call.callee.get())) {
          auto sym = program_.names->names.find(name);
          if (sym != program_.names->names.end()) {
            if (sym->second.kind == Symbol::Kind::Builtin &&
                findBuiltin(sym->second.builtin)->kind == BuiltinKind::Combinator)
              ok = false;
            if (sym->second.kind == Symbol::Kind::Def &&
                !inlinable(*static_cast<const FunctionDecl *>(sym->second.decl)))
              ok = false;
            if (sym->second.kind == Symbol::Kind::Local && !isBlockParam(fn, sym->second.binding))
              ok = false; // a block held in a local: only known where the def is applied
          }
        } else {
          ok = false;
        }
        for (const Argument &a : call.args)
          visit(*a.value);
        return;
      }
      default:
        forEachChild(e, visit);
      }
    };
    if (fn.exprBody)
      visit(*fn.exprBody);
    for (const StmtPtr &s : fn.body) {
      if (auto *let = dyn_cast<LetStmt>(s.get()))
        visit(*let->value);
      else if (auto *v = dyn_cast<ValueStmt>(s.get()))
        visit(*v->value);
      else if (auto *m = dyn_cast<MetricStmt>(s.get()))
        visit(*m->value);
    }
    inlinable_[&fn] = ok;
    return ok;
  }

  /// A parameter of `fn` that takes a block: inlining substitutes the block given.
  bool isBlockParam(const FunctionDecl &fn, const void *binding) const {
    for (const Parameter &p : fn.params)
      if (&p == binding && program_.bindingTypes.at(&p)->kind == TypeKind::Block)
        return true;
    return false;
  }

  static void forEachChild(const Expr &e, const std::function<void(const Expr &)> &f) {
    if (auto *m = dyn_cast<MemberExpr>(&e)) f(*m->base);
    else if (auto *i = dyn_cast<IndexExpr>(&e)) { f(*i->base); f(*i->index); }
    else if (auto *s = dyn_cast<SliceExpr>(&e)) { f(*s->base); if (s->lo) f(*s->lo); if (s->hi) f(*s->hi); }
    else if (auto *n = dyn_cast<NegExpr>(&e)) f(*n->operand);
    else if (auto *b = dyn_cast<BinaryExpr>(&e)) { f(*b->lhs); f(*b->rhs); }
    else if (auto *t = dyn_cast<TupleExpr>(&e)) { for (auto &x : t->elements) f(*x); }
  }

  // ------------------------------------------------------------ functions
  void lowerFunction(const FunctionDecl &fn) {
    handles_ = loops_ = 0; // step names are per function
    FunctionPlan fp;
    fp.function = &fn;
    Context ctx(fn.name, &fp.steps);
    for (const Parameter &p : fn.params) {
      TypeRef t = program_.bindingTypes.at(&p);
      env_[&p] = t->isHost() ? AVal::named(p.name, t) : handleFor(p.name, t, 0);
    }
    if (fn.exprBody)
      returnStep(eval(*fn.exprBody, ctx), ctx);
    for (const StmtPtr &s : fn.body)
      lowerStmt(*s, ctx);
    finish(ctx);
    plan_.functions.push_back(std::move(fp));
  }

  /// A value that arrives from a structural step; tuples arrive element-wise.
  AVal handleFor(const std::string &name, const TypeRef &type, int stage) {
    if (type->kind == TypeKind::Tuple && containsTensor(type)) {
      AVal t;
      t.kind = AVal::Kind::Tuple;
      t.type = type;
      for (size_t i = 0; i < type->elements.size(); ++i)
        t.elements.push_back(handleFor(name + "." + std::to_string(i), type->elements[i], stage));
      return t;
    }
    if (type->isHost())
      return AVal::named(name, type);
    return AVal::handle(name, type, stage);
  }

  static UnfoldStep makeStep(UnfoldStep::Kind kind, std::string text, std::string name = "",
                             std::vector<StepValue> values = {}) {
    UnfoldStep s;
    s.kind = kind;
    s.text = std::move(text);
    s.name = std::move(name);
    s.values = std::move(values);
    return s;
  }

  /// The context's kernels are placed, then `return value`.
  void returnStep(const AVal &v, Context &ctx) {
    StepValue value = valueOf(v);
    finish(ctx);
    ctx.steps->push_back(makeStep(UnfoldStep::Kind::Return, "return " + textOf(value), "", {value}));
  }

  void lowerStmt(const Stmt &s, Context &ctx) {
    switch (s.kind()) {
    case StmtKind::Let: {
      auto &let = static_cast<const LetStmt &>(s);
      bind(*let.pattern, eval(*let.value, ctx));
      return;
    }
    case StmtKind::Param:
      return; // params are read by the operations that use them
    case StmtKind::Return:
      returnStep(eval(*static_cast<const ValueStmt &>(s).value, ctx), ctx);
      return;
    case StmtKind::Loss:
      markResult(eval(*static_cast<const ValueStmt &>(s).value, ctx), "loss", ctx);
      return;
    case StmtKind::Output:
      markResult(eval(*static_cast<const ValueStmt &>(s).value, ctx), "output", ctx);
      return;
    case StmtKind::Metric: {
      auto &m = static_cast<const MetricStmt &>(s);
      markResult(eval(*m.value, ctx), "metric " + m.name, ctx);
      return;
    }
    }
  }

  void markResult(const AVal &v, const std::string &role, Context &ctx) {
    if (v.kind == AVal::Kind::Local) {
      plan_.kernels[size_t(v.kernel)].results.push_back({v.value, role});
      return;
    }
    StepValue value = valueOf(v);
    ctx.steps->push_back(makeStep(UnfoldStep::Kind::Role, role + " " + textOf(value), role, {value}));
  }

  void bind(const Pattern &p, const AVal &v) {
    if (auto *n = dyn_cast<NamePattern>(&p)) {
      env_[n] = v;
    } else if (auto *t = dyn_cast<TuplePattern>(&p)) {
      for (size_t i = 0; i < t->elements.size(); ++i)
        bind(*t->elements[i], element(v, i));
    }
  }

  AVal element(const AVal &v, size_t i) {
    if (v.kind == AVal::Kind::Tuple)
      return v.elements[i];
    TypeRef t = v.type->kind == TypeKind::Tuple ? v.type->elements[i] : types::errorType();
    return handleFor(v.text + "." + std::to_string(i), t, v.stage);
  }

  /// What a step reads for `v`: a handle, a kernel result (its kernel is
  /// placed first), a host value or a tuple of these.
  StepValue valueOf(const AVal &v) {
    StepValue out;
    out.type = v.type;
    switch (v.kind) {
    case AVal::Kind::Local:
      materialize(v);
      out.kind = StepValue::Kind::KernelResult;
      out.kernel = v.kernel;
      out.op = v.value;
      return out;
    case AVal::Kind::Tuple:
      out.kind = StepValue::Kind::Tuple;
      for (const AVal &e : v.elements)
        out.elements.push_back(valueOf(e));
      return out;
    case AVal::Kind::Host:
      out.kind = StepValue::Kind::Host;
      out.host = v.expr;
      out.name = v.text;
      return out;
    default:
      out.name = v.text;
      return out;
    }
  }

  /// How the printed plan names a value.
  std::string textOf(const StepValue &v) const {
    switch (v.kind) {
    case StepValue::Kind::KernelResult:
      return plan_.kernels[size_t(v.kernel)].name + "%" + std::to_string(v.op);
    case StepValue::Kind::Tuple: {
      std::string out;
      for (const StepValue &e : v.elements)
        out += (out.empty() ? "" : ", ") + textOf(e);
      return "(" + out + ")";
    }
    default:
      return v.name;
    }
  }

  /// A local value used outside its kernel becomes one of the kernel's
  /// results, and the kernel is instantiated before that use.
  void materialize(const AVal &v) {
    instantiate(v.kernel);
    KernelPlan &k = plan_.kernels[size_t(v.kernel)];
    bool present = false;
    for (auto &[value, role] : k.results)
      present |= value == v.value && role == "value";
    if (!present)
      k.results.push_back({v.value, "value"});
  }

  // ------------------------------------------------------------ kernels
  KernelPlan &kernelAt(Context &ctx, int stage, SourceRange range) {
    auto it = ctx.kernelAtStage.find(stage);
    if (it != ctx.kernelAtStage.end())
      return plan_.kernels[size_t(it->second)];
    KernelPlan k;
    k.id = int(plan_.kernels.size());
    k.name = ctx.name + "." + std::to_string(ctx.kernelsMade++);
    k.range = range;
    ctx.kernelAtStage[stage] = k.id;
    ctx.pending.push_back(k.id);
    owner_[k.id] = &ctx;
    plan_.kernels.push_back(std::move(k));
    return plan_.kernels.back();
  }

  /// Places the instance step of kernel `id` (if not placed yet) and closes it.
  void instantiate(int id) {
    auto owner = owner_.find(id);
    if (owner == owner_.end())
      return;
    Context &ctx = *owner->second;
    for (auto it = ctx.kernelAtStage.begin(); it != ctx.kernelAtStage.end(); ++it)
      if (it->second == id) {
        ctx.kernelAtStage.erase(it);
        break;
      }
    ctx.pending.erase(std::find(ctx.pending.begin(), ctx.pending.end(), id));
    UnfoldStep s = makeStep(UnfoldStep::Kind::Instance, "instance " + plan_.kernels[size_t(id)].name);
    s.kernel = id;
    ctx.steps->push_back(std::move(s));
    owner_.erase(owner);
  }

  /// The end of a context: its remaining kernels are instantiated in order.
  void finish(Context &ctx) {
    while (!ctx.pending.empty())
      instantiate(ctx.pending.front());
  }

  /// The operand naming `v` inside kernel `k`: an op result, an argument
  /// (added the first time) when it comes from outside, a host input or a constant.
  PlanOperand operandIn(KernelPlan &k, const AVal &v) {
    PlanOperand operand;
    if (v.kind == AVal::Kind::Host && v.constant) {
      operand.kind = PlanOperand::Kind::Constant;
      operand.constant = v.text;
      return operand;
    }
    if (v.kind == AVal::Kind::Host) {
      operand.kind = PlanOperand::Kind::Host;
      operand.index = indexOf(k.hostInputs, v);
      return operand;
    }
    if (v.kind == AVal::Kind::Local && v.kernel == k.id) {
      operand.index = v.value;
      return operand;
    }
    operand.kind = PlanOperand::Kind::Argument;
    StepValue value = valueOf(v);
    std::string source = textOf(value);
    auto found = std::find(k.argSources.begin(), k.argSources.end(), source);
    operand.index = int(found - k.argSources.begin());
    if (found == k.argSources.end()) {
      k.args.push_back(v.type);
      k.argSources.push_back(source);
      k.argValues.push_back(std::move(value));
    }
    return operand;
  }

  static int indexOf(std::vector<HostInput> &inputs, const AVal &v) {
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].source == v.text)
        return int(i);
    inputs.push_back({v.text, v.type, v.expr});
    return int(inputs.size() - 1);
  }

  /// Adds an operation over tensor operands (host operands become host inputs).
  AVal emit(Context &ctx, const std::string &name, const std::vector<AVal> &operands,
            TypeRef type, double flops, SourceRange range, std::string attribute = "") {
    int stage = 0;
    for (const AVal &o : operands)
      if (o.isTensorLike())
        stage = std::max(stage, o.stage);
    KernelPlan &k = kernelAt(ctx, stage, range);
    if (!fusing_.empty() &&
        std::find(k.fuses.begin(), k.fuses.end(), fusing_.back()) == k.fuses.end())
      k.fuses.push_back(fusing_.back());
    PlanOp op;
    op.name = name;
    op.type = std::move(type);
    op.flops = flops;
    op.attribute = std::move(attribute);
    for (const AVal &o : operands)
      if (o.isTensorLike() || o.kind == AVal::Kind::Host)
        op.operands.push_back(operandIn(k, o));
    AVal v;
    v.kind = AVal::Kind::Local;
    v.kernel = k.id;
    v.stage = stage;
    v.value = sameOp(k, op);
    if (v.value < 0) {
      k.ops.push_back(std::move(op));
      v.value = int(k.ops.size() - 1);
    }
    v.type = k.ops[size_t(v.value)].type;
    return v;
  }

  /// An op of `k` computing exactly what `op` does (same operation, operands
  /// and attribute), or -1: written twice in the source, computed once.
  /// Dropout is never shared: each use draws its own mask.
  static int sameOp(const KernelPlan &k, const PlanOp &op) {
    if (op.name == "dropout")
      return -1;
    for (size_t i = 0; i < k.ops.size(); ++i) {
      const PlanOp &o = k.ops[i];
      if (o.name != op.name || o.attribute != op.attribute || !sameType(o.type, op.type) ||
          o.operands.size() != op.operands.size())
        continue;
      bool same = true;
      for (size_t j = 0; j < o.operands.size(); ++j)
        same &= o.operands[j].kind == op.operands[j].kind &&
                o.operands[j].index == op.operands[j].index &&
                o.operands[j].constant == op.operands[j].constant;
      if (same)
        return int(i);
    }
    return -1;
  }

  static int64_t width(const TypeRef &t) {
    int64_t n = 1;
    for (int64_t d : t->shape)
      n *= d;
    return n;
  }

  // ------------------------------------------------------------ expressions
  AVal eval(const Expr &e, Context &ctx) {
    TypeRef type = program_.typeOf(e);
    switch (e.kind()) {
    case ExprKind::IntLit: case ExprKind::FloatLit: case ExprKind::StringLit:
    case ExprKind::BoolLit:
      return AVal::constantValue(toSource(e), type);
    case ExprKind::Name: return evalName(static_cast<const NameExpr &>(e), type);
    case ExprKind::Member: {
      auto &m = static_cast<const MemberExpr &>(e);
      AVal base = eval(*m.base, ctx);
      if (m.selector.isIndex())
        return element(base, *m.selector.index);
      return AVal::field(base, m.selector.field, type);
    }
    case ExprKind::Tuple: {
      AVal t;
      t.kind = AVal::Kind::Tuple;
      t.type = type;
      for (const ExprPtr &x : static_cast<const TupleExpr &>(e).elements)
        t.elements.push_back(eval(*x, ctx));
      return t;
    }
    case ExprKind::Neg: {
      AVal x = eval(*static_cast<const NegExpr &>(e).operand, ctx);
      if (x.kind == AVal::Kind::Host) // -x on the host is 0 - x
        return AVal::host(toSource(e), type,
                          hostExpr(HostExpr::Kind::Binary, "-", type,
                                   {hostExpr(HostExpr::Kind::Literal, "0", type), x.expr}));
      return emit(ctx, "neg", {x}, type, double(width(type)), e.range());
    }
    case ExprKind::Binary: return evalBinary(static_cast<const BinaryExpr &>(e), type, ctx);
    case ExprKind::Index: case ExprKind::Slice: return evalIndexOrSlice(e, type, ctx);
    case ExprKind::Call: return evalCall(static_cast<const CallExpr &>(e), type, ctx);
    case ExprKind::Pipe: {
      auto &p = static_cast<const PipeExpr &>(e);
      if (program_.typeOf(*p.lhs)->kind == TypeKind::Block)
        return blockValue(type);
      return apply(program_.typeOf(*p.rhs)->block, {eval(*p.lhs, ctx)}, type, e, ctx);
    }
    case ExprKind::Lambda: case ExprKind::Accessor:
      return blockValue(type);
    case ExprKind::Match: return evalMatch(static_cast<const MatchExpr &>(e), type, ctx);
    case ExprKind::If: return evalIf(static_cast<const IfExpr &>(e), type, ctx);
    case ExprKind::List: {
      std::vector<AVal> elements;
      for (const ExprPtr &x : static_cast<const ListExpr &>(e).elements)
        elements.push_back(eval(*x, ctx));
      if (type->isHost()) {
        std::vector<HostExprRef> hosts;
        for (const AVal &x : elements)
          hosts.push_back(x.expr);
        return AVal::host(toSource(e), type, hostExpr(HostExpr::Kind::List, "", type, hosts));
      }
      return structural(ctx, structuralStep("list", elements, ctx), type, 0);
    }
    case ExprKind::Arrow:
      break;
    }
    return AVal::unsupported(toSource(e), type);
  }

  static AVal tuple(std::vector<AVal> elements) {
    AVal t;
    t.kind = AVal::Kind::Tuple;
    std::vector<TypeRef> ts;
    for (const AVal &e : elements)
      ts.push_back(e.type);
    t.type = types::tuple(ts);
    t.elements = std::move(elements);
    return t;
  }

  AVal blockValue(const TypeRef &type) {
    AVal v;
    v.kind = AVal::Kind::Block;
    v.type = type;
    v.block = type->block;
    return v;
  }

  AVal evalName(const NameExpr &name, const TypeRef &type) {
    const Symbol &sym = program_.names->names.at(&name);
    switch (sym.kind) {
    case Symbol::Kind::Local: {
      auto it = env_.find(sym.binding);
      if (it != env_.end())
        return it->second;
      if (auto *p = static_cast<const ParamDecl *>(sym.binding); program_.params.count(p))
        return AVal::named(ownerOf(p) + p->name, type); // a def-local param, read by an op
      return AVal::named(name.name, type);
    }
    case Symbol::Kind::Param:
      return AVal::named(name.name, type);
    case Symbol::Kind::Const:
      return AVal::constantValue(program_.consts->evaluate(name, nullptr)->toString(), type);
    default:
      return blockValue(type);
    }
  }

  std::string ownerOf(const ParamDecl *param) {
    for (const DeclPtr &d : program_.module->decls)
      if (auto *fn = dyn_cast<FunctionDecl>(d.get()))
        for (const StmtPtr &s : fn->body)
          if (auto *ps = dyn_cast<ParamStmt>(s.get()); ps && &ps->param == param)
            return fn->name + ".";
    return "";
  }

  /// A parameter used as an operand: `linear x, leaf_cell.W`.
  bool isParam(const Expr &e, std::string &name) {
    auto *n = dyn_cast<NameExpr>(&e);
    if (!n)
      return false;
    const Symbol &sym = program_.names->names.at(n);
    if (sym.kind == Symbol::Kind::Param) {
      name = n->name;
      return true;
    }
    if (sym.kind == Symbol::Kind::Local && !env_.count(sym.binding)) {
      name = ownerOf(static_cast<const ParamDecl *>(sym.binding)) + n->name;
      return true;
    }
    return false;
  }

  AVal evalBinary(const BinaryExpr &b, const TypeRef &type, Context &ctx) {
    std::string param;
    if (b.op == BinaryOp::MatMul && isParam(*b.rhs, param)) {
      AVal x = eval(*b.lhs, ctx);
      TypeRef w = program_.typeOf(*b.rhs);
      AVal v = emit(ctx, "linear", {x}, type, 2.0 * double(width(w)), b.range(), param);
      plan_.kernels[size_t(v.kernel)].params.insert(param);
      return v;
    }
    if ((b.op == BinaryOp::Add) && isParam(*b.rhs, param)) {
      AVal x = eval(*b.lhs, ctx);
      AVal v = emit(ctx, "bias_add", {x}, type, double(width(type)), b.range(), param);
      plan_.kernels[size_t(v.kernel)].params.insert(param);
      return v;
    }
    AVal lhs = eval(*b.lhs, ctx), rhs = eval(*b.rhs, ctx);
    static const char *names[] = {"add", "sub", "mul", "div", "matmul", "eq", "ne",
                                  "lt",  "le",  "gt",  "ge"};
    static const char *symbols[] = {"+", "-", "*", "/", "@", "==", "!=", "<", "<=", ">", ">="};
    if (lhs.kind == AVal::Kind::Host && rhs.kind == AVal::Kind::Host)
      return AVal::host(toSource(b), type,
                        hostExpr(HostExpr::Kind::Binary, symbols[int(b.op)], type,
                                 {lhs.expr, rhs.expr}));
    double flops = b.op == BinaryOp::MatMul ? 2.0 * double(width(program_.typeOf(*b.lhs))) *
                                                  double(width(type))
                                            : double(width(type));
    return emit(ctx, names[int(b.op)], {lhs, rhs}, type, flops, b.range());
  }

  AVal evalIndexOrSlice(const Expr &e, const TypeRef &type, Context &ctx) {
    const Expr &base = isa<IndexExpr>(&e) ? *static_cast<const IndexExpr &>(e).base
                                          : *static_cast<const SliceExpr &>(e).base;
    AVal b = eval(base, ctx);
    if (b.type->kind == TypeKind::List) { // of a list: unfolding picks the elements
      std::string name = isa<IndexExpr>(&e) ? "index" : "slice";
      std::vector<AVal> parts = {b};
      if (auto *index = dyn_cast<IndexExpr>(&e)) {
        parts.push_back(eval(*index->index, ctx));
      } else {
        auto &slice = static_cast<const SliceExpr &>(e);
        parts.push_back(slice.lo ? eval(*slice.lo, ctx) : AVal::constantValue("0", types::intType()));
        if (slice.hi)
          parts.push_back(eval(*slice.hi, ctx));
      }
      if (type->isHost())
        return AVal::host(toSource(e), type,
                          hostExpr(HostExpr::Kind::Call, name, type, hostOperands(parts)));
      return structural(ctx, structuralStep(name, parts, ctx, toSource(e)), type, 0);
    }
    return emit(ctx, isa<IndexExpr>(&e) ? "index" : "slice", {b}, type, 0, e.range(),
                boundsOf(e, b.type));
  }

  /// `lo:hi` of a tensor slice, or the index, with constants folded.
  std::string boundsOf(const Expr &e, const TypeRef &base) {
    auto value = [&](const Expr *x, long long otherwise) {
      return x ? program_.consts->evaluate(*x, nullptr)->intValue : otherwise;
    };
    if (auto *index = dyn_cast<IndexExpr>(&e))
      return std::to_string(value(index->index.get(), 0));
    auto &slice = static_cast<const SliceExpr &>(e);
    return std::to_string(value(slice.lo.get(), 0)) + ":" +
           std::to_string(value(slice.hi.get(), base->shape.back()));
  }

  /// A Structural step `name(values)`, shown as `shown` when given.
  UnfoldStep structuralStep(const std::string &name, const std::vector<AVal> &args, Context &,
                            const std::string &shown = "") {
    std::vector<StepValue> values;
    std::string list;
    for (const AVal &a : args) {
      values.push_back(valueOf(a));
      list += (list.empty() ? "" : ", ") + textOf(values.back());
    }
    return makeStep(UnfoldStep::Kind::Structural,
                    shown.empty() ? name + "(" + list + ")" : shown, name, std::move(values));
  }

  /// Places a step of the unfolding that yields a value (a call, a
  /// combinator...), naming its value with a new handle.
  AVal structural(Context &ctx, UnfoldStep s, const TypeRef &type, int inputStage) {
    s.target = "%" + std::to_string(handles_++);
    s.type = type;
    s.text = s.target + " = " + s.text;
    ctx.steps->push_back(std::move(s));
    return handleFor(ctx.steps->back().target, type, inputStage + 1);
  }

  int maxStage(const std::vector<AVal> &values) {
    int s = 0;
    for (const AVal &v : values) {
      if (v.isTensorLike())
        s = std::max(s, v.stage);
      if (v.kind == AVal::Kind::Tuple)
        s = std::max(s, maxStage(v.elements));
    }
    return s;
  }

  AVal evalCall(const CallExpr &call, const TypeRef &type, Context &ctx) {
    std::vector<AVal> args;
    for (const Argument &a : call.args)
      args.push_back(eval(*a.value, ctx));
    if (auto *name = dyn_cast<NameExpr>(call.callee.get())) {
      const Symbol &sym = program_.names->names.at(name);
      if (sym.kind == Symbol::Kind::Builtin)
        return builtin(name->name, args, type, call, ctx);
      // A block parameter of an inlined def: apply the block it was given.
      if (auto bound = env_.find(sym.binding);
          sym.kind == Symbol::Kind::Local && bound != env_.end() && bound->second.block)
        return apply(bound->second.block, args, type, call, ctx);
    }
    TypeRef callee = program_.typeOf(*call.callee);
    return apply(callee->block, args, type, call, ctx);
  }

  /// Spreads one tuple argument over several parameters, or packs several into one.
  std::vector<AVal> adapt(std::vector<AVal> args, size_t arity) {
    if (args.size() == arity)
      return args;
    if (arity == 1) {
      AVal t;
      t.kind = AVal::Kind::Tuple;
      t.elements = std::move(args);
      std::vector<TypeRef> ts;
      for (const AVal &a : t.elements)
        ts.push_back(a.type);
      t.type = types::tuple(ts);
      return {t};
    }
    std::vector<AVal> spread;
    for (size_t i = 0; i < arity; ++i)
      spread.push_back(element(args[0], i));
    return spread;
  }

  AVal apply(const std::shared_ptr<const BlockValue> &block, std::vector<AVal> args,
             const TypeRef &type, const Expr &site, Context &ctx) {
    if (!block)
      return structural(ctx, structuralStep("call", args, ctx, "call " + toSource(site)), type,
                        maxStage(args));
    switch (block->kind) {
    case BlockValue::Kind::Def: {
      const FunctionDecl &fn = *block->def;
      args = adapt(std::move(args), fn.params.size());
      if (!inlinable(fn)) {
        UnfoldStep call = structuralStep(fn.name, args, ctx);
        call.kind = UnfoldStep::Kind::Call;
        call.text = "call " + call.text;
        return structural(ctx, std::move(call), type, maxStage(args));
      }
      for (size_t i = 0; i < args.size(); ++i)
        env_[&fn.params[i]] = args[i];
      fusing_.push_back(fn.name);
      AVal result;
      if (fn.exprBody)
        result = eval(*fn.exprBody, ctx);
      for (const StmtPtr &s : fn.body) {
        if (auto *ret = dyn_cast<ValueStmt>(s.get()); ret && s->kind() == StmtKind::Return)
          result = eval(*ret->value, ctx);
        else
          lowerStmt(*s, ctx);
      }
      fusing_.pop_back();
      return result;
    }
    case BlockValue::Kind::Layer: {
      const LayerInfo &info = program_.layers.at(block->layer);
      return layer(*block->layer, adapt(std::move(args), info.blockType->params.size()), site, ctx);
    }
    case BlockValue::Kind::Builtin: return builtin(block->builtin, args, type, site, ctx);
    case BlockValue::Kind::Lambda: {
      const LambdaExpr &lambda = *block->lambda;
      args = adapt(std::move(args), lambda.params.size());
      for (size_t i = 0; i < args.size(); ++i)
        bind(*lambda.params[i], args[i]);
      return eval(*lambda.body, ctx);
    }
    case BlockValue::Kind::Accessor: {
      AVal base = adapt(std::move(args), 1)[0];
      if (block->selector.isIndex())
        return element(base, *block->selector.index);
      return AVal::field(base, block->selector.field, type);
    }
    case BlockValue::Kind::Partial: {
      std::vector<AVal> all;
      for (const Expr *e : block->boundArgs)
        all.push_back(eval(*e, ctx));
      for (AVal &a : args)
        all.push_back(std::move(a));
      return builtin(block->builtin, all, type, site, ctx);
    }
    case BlockValue::Kind::Compose: {
      AVal middle = apply(block->first, std::move(args), types::errorType(), site, ctx);
      return apply(block->second, {middle}, type, site, ctx);
    }
    case BlockValue::Kind::Host: { // an imported C++ function, run at unfold time
      const HostFunction &f = program_.hostFunctions[size_t(block->hostFunction)];
      args = adapt(std::move(args), f.params.size());
      return AVal::host(toSource(site), type,
                        hostExpr(HostExpr::Kind::HostCall, f.qualifiedName, type, hostOperands(args)));
    }
    case BlockValue::Kind::Typed:
      return structural(ctx, structuralStep("call", args, ctx, "call block " + toSource(*block->source)),
                        type, maxStage(args));
    }
    return AVal::unsupported("?", type);
  }

  AVal layer(const LayerDecl &decl, std::vector<AVal> args, const Expr &site, Context &ctx) {
    const LayerInfo &info = program_.layers.at(&decl);
    TypeRef type = info.blockType->result;
    fusing_.push_back(decl.name);
    AVal x = args[0];
    AVal result;
    SourceRange at = site.range();
    auto param = [&](const char *p) { return decl.name + "." + p; };
    switch (info.kind) {
    case LayerKind::Embedding:
      result = emit(ctx, "gather", {x}, type, 0, at, param("E"));
      plan_.kernels[size_t(result.kernel)].params.insert(param("E"));
      break;
    case LayerKind::FullyConnected: {
      TypeRef out = types::f32({info.out});
      result = emit(ctx, "linear", {x}, out, 2.0 * double(info.in * info.out), at, param("W"));
      result = emit(ctx, "bias_add", {result}, out, double(info.out), at, param("b"));
      static const char *acts[] = {"", "tanh", "relu", "sigmoid"};
      if (info.activation != Activation::None)
        result = emit(ctx, acts[int(info.activation)], {result}, out, double(info.out), at);
      plan_.kernels[size_t(result.kernel)].params.insert({param("W"), param("b")});
      break;
    }
    case LayerKind::LSTM:
      result = lstmCell(decl, info, x, args[1], ctx, at);
      break;
    case LayerKind::GRU:
      result = gruCell(decl, info, x, args[1], ctx, at);
      break;
    }
    fusing_.pop_back();
    return result;
  }

  // Recurrent cells are lowered to primitive operations, so they fuse with
  // what surrounds them and get their gradients from the primitives'.
  AVal linearOf(const AVal &x, const std::string &param, int64_t in, int64_t out, Context &ctx,
                SourceRange at) {
    AVal v = emit(ctx, "linear", {x}, types::f32({out}), 2.0 * double(in * out), at, param);
    plan_.kernels[size_t(v.kernel)].params.insert(param);
    return v;
  }
  AVal sliceOf(const AVal &x, int64_t lo, int64_t hi, Context &ctx, SourceRange at) {
    return emit(ctx, "slice", {x}, types::f32({hi - lo}), 0, at,
                std::to_string(lo) + ":" + std::to_string(hi));
  }
  AVal elementwise(const std::string &op, std::vector<AVal> xs, int64_t h, Context &ctx,
                   SourceRange at) {
    return emit(ctx, op, xs, types::f32({h}), double(h), at);
  }

  /// lstm (brief §6): g = x@W + h@U + b; i, f, o, u from its quarters;
  /// c' = i*u + f*c; h' = o*tanh(c'); gives (h', (h', c')).
  AVal lstmCell(const LayerDecl &decl, const LayerInfo &info, const AVal &x, const AVal &state,
                Context &ctx, SourceRange at) {
    int64_t h = info.out;
    AVal gates = elementwise("add", {linearOf(x, decl.name + ".W", info.in, 4 * h, ctx, at),
                                     linearOf(element(state, 0), decl.name + ".U", h, 4 * h, ctx, at)},
                             4 * h, ctx, at);
    gates = emit(ctx, "bias_add", {gates}, types::f32({4 * h}), double(4 * h), at, decl.name + ".b");
    plan_.kernels[size_t(gates.kernel)].params.insert(decl.name + ".b");
    auto gate = [&](int k, const char *act) {
      return elementwise(act, {sliceOf(gates, k * h, (k + 1) * h, ctx, at)}, h, ctx, at);
    };
    AVal i = gate(0, "sigmoid"), f = gate(1, "sigmoid"), o = gate(2, "sigmoid"), u = gate(3, "tanh");
    AVal c = elementwise("add", {elementwise("mul", {i, u}, h, ctx, at),
                                 elementwise("mul", {f, element(state, 1)}, h, ctx, at)},
                         h, ctx, at);
    AVal next = elementwise("mul", {o, elementwise("tanh", {c}, h, ctx, at)}, h, ctx, at);
    return tuple({next, tuple({next, c})});
  }

  /// gru (docs/language.md): z, r from x@W + s@U + b; n = tanh(x@W + b +
  /// (r*s)@U) on the last third; s' = n + z*(s - n) = (1-z)*n + z*s; gives (s', s').
  AVal gruCell(const LayerDecl &decl, const LayerInfo &info, const AVal &x, const AVal &s,
               Context &ctx, SourceRange at) {
    int64_t h = info.out;
    std::string U = decl.name + ".U";
    AVal gx = emit(ctx, "bias_add", {linearOf(x, decl.name + ".W", info.in, 3 * h, ctx, at)},
                   types::f32({3 * h}), double(3 * h), at, decl.name + ".b");
    plan_.kernels[size_t(gx.kernel)].params.insert(decl.name + ".b");
    AVal gs = linearOf(s, U, h, 3 * h, ctx, at);
    auto gate = [&](int k) {
      return elementwise("sigmoid", {elementwise("add", {sliceOf(gx, k * h, (k + 1) * h, ctx, at),
                                                         sliceOf(gs, k * h, (k + 1) * h, ctx, at)},
                                                 h, ctx, at)},
                         h, ctx, at);
    };
    AVal z = gate(0), r = gate(1);
    AVal grs = linearOf(elementwise("mul", {r, s}, h, ctx, at), U, h, 3 * h, ctx, at);
    AVal n = elementwise("tanh", {elementwise("add", {sliceOf(gx, 2 * h, 3 * h, ctx, at),
                                                      sliceOf(grs, 2 * h, 3 * h, ctx, at)},
                                              h, ctx, at)},
                         h, ctx, at);
    AVal next = elementwise(
        "add", {n, elementwise("mul", {z, elementwise("sub", {s, n}, h, ctx, at)}, h, ctx, at)}, h,
        ctx, at);
    return tuple({next, next});
  }

  /// A kernel of one operation over tensor arguments `args` (and host
  /// inputs), which a Sequence step instantiates in its loops.
  int helperKernel(const std::string &name, SourceRange at, const std::string &op,
                   std::vector<TypeRef> args, const TypeRef &type,
                   std::vector<HostInput> hosts = {}) {
    KernelPlan k;
    k.id = int(plan_.kernels.size());
    k.name = name;
    k.range = at;
    PlanOp o;
    o.name = op;
    o.type = type;
    o.flops = op == "zeros" ? 0 : double(width(type));
    for (size_t i = 0; i < args.size(); ++i) {
      k.argSources.push_back("%a" + std::to_string(i));
      o.operands.push_back({PlanOperand::Kind::Argument, int(i), ""});
    }
    for (size_t h = 0; h < hosts.size(); ++h)
      o.operands.push_back({PlanOperand::Kind::Host, int(h), ""});
    k.args = std::move(args);
    k.hostInputs = std::move(hosts);
    k.ops.push_back(std::move(o));
    k.results.push_back({0, "value"});
    plan_.kernels.push_back(std::move(k));
    return plan_.kernels.back().id;
  }

  /// The kernels of `name` across a sequence of `element`s (see UnfoldStep::helpers).
  /// sum, max, min: [combine neighbours, zeros for an empty sequence].
  std::vector<int> sequenceKernels(const std::string &name, const TypeRef &element,
                                   const std::string &context, SourceRange at) {
    std::string prefix = context + ".seq_" + name + ".";
    auto add = [&] { return helperKernel(prefix + "add", at, "add", {element, element}, element); };
    auto zeros = [&] { return helperKernel(prefix + "zeros", at, "zeros", {}, element); };
    if (name == "sum")
      return {add(), zeros()};
    if (name == "mean") {
      HostInput n{"length", types::floatType(), nullptr};
      return {add(), zeros(), helperKernel(prefix + "scale", at, "div", {element}, element, {n})};
    }
    if (name == "softmax")
      return {helperKernel(prefix + "exp", at, "exp", {element}, element), add(), zeros(),
              helperKernel(prefix + "divide", at, "div", {element, element}, element)};
    // max, min: element-wise maximum/minimum of neighbours.
    return {helperKernel(prefix + (name == "max" ? "maximum" : "minimum"), at,
                         name == "max" ? "maximum" : "minimum", {element, element}, element),
            zeros()};
  }

  AVal builtin(const std::string &name, std::vector<AVal> args, const TypeRef &type,
               const Expr &site, Context &ctx) {
    const BuiltinInfo *info = findBuiltin(name);
    if (info->kind == BuiltinKind::Combinator)
      return combinator(name, args, type, site, ctx);
    bool anyTensor = false;
    for (const AVal &a : args)
      anyTensor |= a.isTensorLike() || a.kind == AVal::Kind::Tuple;
    bool sequence = !args.empty() && args[0].type && args[0].type->kind == TypeKind::List;
    if (sequence) { // sum/mean/max/min/softmax across a sequence
      UnfoldStep s = structuralStep(name, {args[0]}, ctx);
      s.kind = UnfoldStep::Kind::Sequence;
      s.text = "seq_" + s.text + " pairwise, depth ceil(log2 n)";
      s.helpers = sequenceKernels(name, args[0].type->element0(), ctx.name, site.range());
      return structural(ctx, std::move(s), type, maxStage(args));
    }
    std::vector<AVal> operands;
    for (const AVal &a : args)
      if (a.isTensorLike() || a.kind == AVal::Kind::Host)
        operands.push_back(a);
    if (!anyTensor && (name == "zeros" || name == "ones" || name == "one_hot" ||
                       name == "tensor" || name == "vector"))
      return emit(ctx, name, operands, type, 0, site.range());
    return emit(ctx, name, operands, type, double(width(type)) * 2, site.range());
  }

  /// Arguments of a call computed at unfold time; a list of handles is a
  /// host vector there too.
  static std::vector<HostExprRef> hostOperands(const std::vector<AVal> &args) {
    std::vector<HostExprRef> operands;
    for (const AVal &a : args)
      operands.push_back(a.kind == AVal::Kind::Host ? a.expr
                                                    : hostExpr(HostExpr::Kind::Name, a.text, a.type));
    return operands;
  }

  AVal combinator(const std::string &name, std::vector<AVal> args, const TypeRef &type,
                  const Expr &site, Context &ctx) {
    int stage = maxStage(args);
    if (name == "length" || name == "nth" || name == "zip" || name == "ngrams") {
      if (!type->isHost())
        return structural(ctx, structuralStep(name, args, ctx), type, stage);
      std::string shown;
      for (const AVal &a : args)
        shown += (shown.empty() ? "" : ", ") + a.text;
      return AVal::host(name + "(" + shown + ")", type,
                        hostExpr(HostExpr::Kind::Call, name, type, hostOperands(args)));
    }
    std::string id = "%" + std::to_string(handles_++);
    auto elementOf = [](const AVal &list) {
      return list.type && list.type->kind == TypeKind::List ? list.type->element0()
                                                            : types::errorType();
    };
    std::string how = name == "fold" || name == "rnn" ? "sequential: depth n"
                      : name == "reduce"              ? "balanced: depth ceil(log2 n)"
                                                      : "one instance per element";
    UnfoldStep loop = makeStep(UnfoldStep::Kind::Combinator, "", name);
    loop.target = id;
    loop.type = type;
    for (size_t i = 1; i < args.size(); ++i)
      loop.values.push_back(valueOf(args[i]));
    std::string over = textOf(loop.values.back());
    if (name == "zip_with")
      over = textOf(loop.values[0]) + ", " + over;
    if (loop.values.size() == 2 && name != "zip_with")
      over += " from " + textOf(loop.values[0]);
    loop.text = id + " = " + name + " over " + over + " (" + how + ")";
    Context body(ctx.name + "." + name + std::to_string(loops_++), &loop.children);
    // The block's arguments, named after this step so nested loops stay apart.
    auto arg = [&](const char *what, const TypeRef &t) { return handleFor(id + "." + what, t, 0); };
    std::vector<AVal> blockArgs;
    if (name == "map")
      blockArgs = {arg("x", elementOf(args[1]))};
    else if (name == "zip_with")
      blockArgs = {arg("x", elementOf(args[1])), arg("y", elementOf(args[2]))};
    else if (name == "fold")
      blockArgs = {arg("state", args[1].type), arg("x", elementOf(args.back()))};
    else if (name == "rnn")
      blockArgs = {arg("x", elementOf(args.back())), arg("state", args[1].type)};
    else // reduce
      blockArgs = {arg("a", elementOf(args.back())), arg("b", elementOf(args.back()))};
    if (args[0].block) { // what one application gives out is a result of its kernels
      StepValue each = valueOf(apply(args[0].block, blockArgs, types::errorType(), site, body));
      finish(body);
      loop.children.push_back(makeStep(UnfoldStep::Kind::Yield, "yield " + textOf(each), "", {each}));
    }
    ctx.steps->push_back(std::move(loop));
    return handleFor(id, type, stage + 1);
  }

  /// One arm of a match or branch of an if: its own context, whose value is
  /// given out as `result`.
  UnfoldStep lowerBranch(const std::string &label, const std::string &binder,
                         const std::string &contextName, const Expr &body,
                         const std::string &result) {
    UnfoldStep arm = makeStep(UnfoldStep::Kind::Arm, label + (binder.empty() ? "" : " " + binder) + ":", label);
    arm.binder = binder;
    Context branch(contextName, &arm.children);
    StepValue value = valueOf(eval(body, branch));
    finish(branch);
    UnfoldStep assign = makeStep(UnfoldStep::Kind::Assign, result + " = " + textOf(value), "", {value});
    assign.target = result;
    arm.children.push_back(std::move(assign));
    return arm;
  }

  /// The value of a match or if. Its stage only groups work: correctness
  /// comes from placing kernels where their values are first used.
  AVal branchResult(const std::string &result, const TypeRef &type) {
    return type->isHost() ? AVal::named(result, type) : handleFor(result, type, 1);
  }

  AVal evalMatch(const MatchExpr &m, const TypeRef &type, Context &ctx) {
    AVal scrutinee = eval(*m.scrutinee, ctx);
    UnfoldStep s = makeStep(UnfoldStep::Kind::Match, "match " + scrutinee.text, "", {valueOf(scrutinee)});
    std::string result = "%" + std::to_string(handles_++);
    s.target = result;
    s.type = type;
    for (const MatchArm &arm : m.arms) {
      if (!arm.binder.empty())
        env_[&arm] = AVal::named(arm.binder, program_.bindingTypes.at(&arm));
      std::string ctor = arm.isDefault() ? "_" : arm.ctor;
      s.children.push_back(lowerBranch(ctor, arm.binder,
                                       ctx.name + "." + (arm.isDefault() ? "default" : ctor),
                                       *arm.body, result));
    }
    ctx.steps->push_back(std::move(s));
    return branchResult(result, type);
  }

  AVal evalIf(const IfExpr &e, const TypeRef &type, Context &ctx) {
    std::string result = "%" + std::to_string(handles_++);
    UnfoldStep s = makeStep(UnfoldStep::Kind::If, "if " + toSource(*e.cond), "",
                            {valueOf(eval(*e.cond, ctx))});
    s.target = result;
    s.type = type;
    s.children.push_back(lowerBranch("then", "", ctx.name + ".then", *e.thenExpr, result));
    s.children.push_back(lowerBranch("else", "", ctx.name + ".else", *e.elseExpr, result));
    ctx.steps->push_back(std::move(s));
    return branchResult(result, type);
  }

  const TypedProgram &program_;
  BatchPlan plan_;
  std::map<const FunctionDecl *, bool> inlinable_;
  std::map<const void *, AVal> env_;
  std::map<int, Context *> owner_; ///< kernels not instantiated yet -> their context
  std::vector<std::string> fusing_;
  int handles_ = 0, loops_ = 0;
};

} // namespace

std::string KernelPlan::identity() const {
  std::string key;
  for (const TypeRef &a : args)
    key += toString(a) + ";";
  // Host sources differ per call site; their types, constants and parameters do not.
  for (const HostInput &h : hostInputs)
    key += toString(h.type) + ";";
  key += "|";
  for (const PlanOp &op : ops) {
    key += op.name + "(";
    for (const PlanOperand &o : op.operands)
      key += std::to_string(int(o.kind)) + ":" + std::to_string(o.index) + o.constant + ",";
    key += op.attribute + "):" + toString(op.type) + ";";
  }
  for (const auto &[value, role] : results)
    key += std::to_string(value) + role + ";";
  return key;
}

double KernelPlan::flops() const {
  double total = 0;
  for (const PlanOp &op : ops)
    total += op.flops;
  return total;
}

BatchPlan analyzeBatching(const TypedProgram &program) { return Lowering(program).run(); }

} // namespace foldc
