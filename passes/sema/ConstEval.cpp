// Folding of constant expressions over ints and floats.
#include "passes/sema/ConstEval.h"

#include "frontend/ASTPrinter.h"
#include "passes/builtins/Builtins.h"

#include <cmath>

#include <sstream>

namespace foldc {

std::string ConstValue::toString() const {
  if (isInt)
    return std::to_string(intValue);
  std::ostringstream s;
  s << floatValue;
  return s.str();
}

namespace {

ConstValue makeInt(long long v) { return ConstValue{true, v, 0}; }
ConstValue makeFloat(double v) { return ConstValue{false, 0, v}; }

std::optional<ConstValue> arithmetic(BinaryOp op, ConstValue a, ConstValue b, SourceRange range,
                                     DiagnosticEngine *diag) {
  if (a.isInt && b.isInt) {
    long long x = a.intValue, y = b.intValue;
    switch (op) {
    case BinaryOp::Add:
      return makeInt(x + y);
    case BinaryOp::Sub:
      return makeInt(x - y);
    case BinaryOp::Mul:
      return makeInt(x * y);
    case BinaryOp::Div:
      if (y == 0) {
        if (diag)
          diag->error(range) << "division by zero in a constant expression";
        return std::nullopt;
      }
      return makeInt(x / y);
    case BinaryOp::MatMul:
    case BinaryOp::Eq:
    case BinaryOp::Ne:
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
    case BinaryOp::And:
    case BinaryOp::Or:
      break;
    }
  } else {
    double x = a.asDouble(), y = b.asDouble();
    switch (op) {
    case BinaryOp::Add:
      return makeFloat(x + y);
    case BinaryOp::Sub:
      return makeFloat(x - y);
    case BinaryOp::Mul:
      return makeFloat(x * y);
    case BinaryOp::Div:
      return makeFloat(x / y);
    case BinaryOp::MatMul:
    case BinaryOp::Eq:
    case BinaryOp::Ne:
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
    case BinaryOp::And:
    case BinaryOp::Or:
      break;
    }
  }
  if (diag)
    diag->error(range) << "operator '" << spelling(op)
                       << "' is not allowed in a constant expression";
  return std::nullopt;
}

/// The element-wise functions constant expressions may call, on one number
/// (`sqrt(3.0 / D)` in an initialiser's bounds).
struct ConstantFunction {
  OpKind op;
  double (*apply)(double);
};
const ConstantFunction kConstantFunctions[] = {
    {OpKind::Sqrt, [](double x) { return std::sqrt(x); }},
    {OpKind::Exp, [](double x) { return std::exp(x); }},
    {OpKind::Log, [](double x) { return std::log(x); }},
    {OpKind::Abs, [](double x) { return std::abs(x); }},
    {OpKind::Square, [](double x) { return x * x; }},
    {OpKind::Tanh, [](double x) { return std::tanh(x); }},
    {OpKind::Sigmoid, [](double x) { return 1 / (1 + std::exp(-x)); }},
};

} // namespace

/// `f(x)` of a constant x, for an element-wise function of the table above.
std::optional<ConstValue> ConstTable::evaluateCall(const CallExpr &call,
                                                   DiagnosticEngine *diag) const {
  auto *callee = dyn_cast<NameExpr>(call.callee.get());
  auto symbol = callee ? names_.names.find(callee) : names_.names.end();
  if (callee && symbol == names_.names.end())
    return std::nullopt; // an unknown name: already reported
  std::optional<OpKind> op;
  if (symbol != names_.names.end() && symbol->second.kind == Symbol::Kind::Builtin &&
      symbol->second.builtin.table == BuiltinName::Table::Callable)
    op = opOf(symbol->second.builtin.callable);
  const ConstantFunction *function = nullptr;
  for (const ConstantFunction &f : kConstantFunctions)
    if (op == f.op)
      function = &f;
  if (!function || call.args.size() != 1 || !call.args[0].name.empty()) {
    if (diag)
      diag->error(call.range()) << "expected a constant expression, found '" << toSource(call)
                                << "' (constant expressions may call sqrt, exp, log, abs, "
                                   "square, tanh and sigmoid of one number)";
    return std::nullopt;
  }
  auto x = evaluate(*call.args[0].value, diag);
  if (!x)
    return std::nullopt;
  double y = function->apply(x->asDouble());
  if (!std::isfinite(y)) {
    if (diag)
      diag->error(call.range()) << "'" << toSource(call) << "' is not a finite number";
    return std::nullopt;
  }
  return makeFloat(y);
}

std::optional<ConstValue> ConstTable::evaluate(const Expr &expr, DiagnosticEngine *diag) const {
  switch (expr.kind()) {
  case ExprKind::IntLit:
    return makeInt(static_cast<const IntLitExpr &>(expr).value);
  case ExprKind::FloatLit:
    return makeFloat(static_cast<const FloatLitExpr &>(expr).value);
  case ExprKind::Neg: {
    auto v = evaluate(*static_cast<const NegExpr &>(expr).operand, diag);
    if (!v)
      return std::nullopt;
    return v->isInt ? makeInt(-v->intValue) : makeFloat(-v->floatValue);
  }
  case ExprKind::Binary: {
    auto &b = static_cast<const BinaryExpr &>(expr);
    auto lhs = evaluate(*b.lhs, diag);
    auto rhs = lhs ? evaluate(*b.rhs, diag) : std::nullopt;
    if (!lhs || !rhs)
      return std::nullopt;
    return arithmetic(b.op, *lhs, *rhs, expr.range(), diag);
  }
  case ExprKind::Name: {
    auto it = names_.names.find(static_cast<const NameExpr *>(&expr));
    if (it == names_.names.end())
      return std::nullopt; // unknown name: already reported
    if (it->second.kind == Symbol::Kind::Const)
      return evaluateConst(*static_cast<const ConstDecl *>(it->second.decl), diag);
    if (diag)
      diag->error(expr.range()) << "expected a constant expression; '" << toSource(expr)
                                << "' is not a const";
    return std::nullopt;
  }
  case ExprKind::Call:
    return evaluateCall(static_cast<const CallExpr &>(expr), diag);
  case ExprKind::StringLit:
  case ExprKind::BoolLit:
  case ExprKind::Accessor:
  case ExprKind::Member:
  case ExprKind::Index:
  case ExprKind::Slice:
  case ExprKind::Subscripts:
  case ExprKind::Not:
  case ExprKind::Pipe:
  case ExprKind::Arrow:
  case ExprKind::Lambda:
  case ExprKind::Tuple:
  case ExprKind::List:
  case ExprKind::Match:
  case ExprKind::If:
    if (diag)
      diag->error(expr.range()) << "expected a constant expression, found '" << toSource(expr)
                                << "'";
    return std::nullopt;
  }
  return std::nullopt;
}

std::optional<ConstValue> ConstTable::evaluateConst(const ConstDecl &decl,
                                                    DiagnosticEngine *diag) const {
  if (auto it = values_.find(&decl); it != values_.end())
    return it->second;
  if (failed_.count(&decl))
    return std::nullopt;
  if (inProgress_[&decl]) {
    if (diag)
      diag->error(decl.nameRange) << "const '" << decl.name << "' is defined in terms of itself";
    failed_[&decl] = true;
    return std::nullopt;
  }
  inProgress_[&decl] = true;
  auto value = evaluate(*decl.value, diag);
  inProgress_[&decl] = false;
  if (!value || !fitsRequiredKind(decl, *value, diag)) {
    failed_[&decl] = true;
    return std::nullopt;
  }
  values_[&decl] = *value;
  return value;
}

/// A layer's int constant must get an int; its float constant takes an
/// int as a float.
bool ConstTable::fitsRequiredKind(const ConstDecl &decl, ConstValue &value,
                                  DiagnosticEngine *diag) const {
  switch (decl.required) {
  case ConstKind::Any:
    return true;
  case ConstKind::Float:
    value = makeFloat(value.asDouble());
    return true;
  case ConstKind::Int:
    if (value.isInt)
      return true;
    if (diag) {
      diag->error(decl.value->range())
          << "'" << decl.name << "' is an int, found " << value.toString();
      diag->note(decl.requiredAt) << "declared an int here";
    }
    return false;
  }
  return false;
}

std::optional<long long> ConstTable::positiveInt(const Expr &expr, const char *what,
                                                 DiagnosticEngine &diag) const {
  auto value = evaluate(expr, &diag);
  if (!value)
    return std::nullopt;
  if (!value->isInt) {
    diag.error(expr.range()) << what << " must be an integer, found " << value->toString();
    return std::nullopt;
  }
  if (value->intValue <= 0) {
    diag.error(expr.range()) << what << " must be positive, found " << value->intValue;
    return std::nullopt;
  }
  return value->intValue;
}

ConstTable evaluateConsts(const Module &module, const ResolvedNames &names,
                          DiagnosticEngine &diag) {
  ConstTable table(names);
  for (const DeclPtr &decl : module.decls)
    if (auto *c = dyn_cast<ConstDecl>(decl.get()))
      table.evaluateConst(*c, &diag);
  return table;
}

} // namespace foldc
