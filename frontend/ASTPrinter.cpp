// Source-like printing and the indented AST dump.
#include "frontend/ASTPrinter.h"

#include <sstream>

namespace foldc {

namespace {

std::string selectorText(const Selector &s) {
  return s.isIndex() ? std::to_string(*s.index) : s.field;
}

/// Binding strength for parenthesising; larger binds tighter.
int precedence(const Expr &e) {
  if (auto *b = dyn_cast<BinaryExpr>(&e)) {
    switch (b->op) {
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::MatMul:
      return 7;
    case BinaryOp::Add:
    case BinaryOp::Sub:
      return 6;
    case BinaryOp::Eq:
    case BinaryOp::Ne:
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
      return 5;
    case BinaryOp::And:
      return 4;
    case BinaryOp::Or:
      return 3;
    }
  }
  switch (e.kind()) {
  case ExprKind::Neg:
  case ExprKind::Not:
    return 8;
  case ExprKind::Pipe:
    return 2;
  case ExprKind::Arrow:
  case ExprKind::Lambda:
    return 1;
  case ExprKind::IntLit:
  case ExprKind::FloatLit:
  case ExprKind::StringLit:
  case ExprKind::BoolLit:
  case ExprKind::Name:
  case ExprKind::Accessor:
  case ExprKind::Member:
  case ExprKind::Call:
  case ExprKind::Index:
  case ExprKind::Slice:
  case ExprKind::Subscripts:
  case ExprKind::Binary:
  case ExprKind::Tuple:
  case ExprKind::List:
  case ExprKind::Match:
  case ExprKind::If:
    return 9;
  }
  return 9;
}

template <typename Range, typename Print>
std::string joined(const Range &items, Print print, const char *sep = ", ") {
  std::string out;
  for (const auto &item : items) {
    if (!out.empty())
      out += sep;
    out += print(item);
  }
  return out;
}

/// A string literal as it would be written, with `"` and `\` escaped.
std::string quoted(const std::string &value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return out + "\"";
}

std::string rangeText(SourceRange r) {
  std::ostringstream s;
  s << '<' << r.begin.line << ':' << r.begin.column << '-' << r.end.line << ':' << r.end.column
    << '>';
  return s.str();
}

const char *hostScalarName(HostScalar s) {
  switch (s) {
  case HostScalar::Int:
    return "int";
  case HostScalar::Float:
    return "float";
  case HostScalar::Bool:
    return "bool";
  case HostScalar::String:
    return "string";
  }
  return "?";
}

std::string fieldsText(const std::vector<FieldDecl> &fields) {
  return "{" +
         joined(fields, [](const FieldDecl &f) { return f.name + ": " + toSource(*f.type); }) + "}";
}

/// Writes the indented tree; one method per node family.
class Dumper {
public:
  explicit Dumper(std::ostream &out) : out_(out) {}

  void module(const Module &m) {
    out_ << "Module '" << m.fileName << "'\n";
    for (const auto &d : m.decls)
      decl(*d, 1);
  }

private:
  std::ostream &line(int depth) { return out_ << std::string(2 * depth, ' '); }

  void decl(const Decl &d, int depth) {
    if (auto *c = dyn_cast<ImportDecl>(&d)) {
      line(depth) << "ImportDecl " << quoted(c->name) << ' ' << rangeText(d.range()) << '\n';
    } else if (auto *c = dyn_cast<ConstDecl>(&d)) {
      line(depth) << "ConstDecl " << c->name << ' ' << rangeText(d.range()) << '\n';
      expr(*c->value, depth + 1);
    } else if (auto *c = dyn_cast<DataDecl>(&d)) {
      line(depth) << "DataDecl " << c->name << (c->isRecord ? " record " : " union ")
                  << rangeText(d.range()) << '\n';
      for (const auto &v : c->variants)
        line(depth + 1) << "Variant " << v.name << ' ' << fieldsText(v.fields) << ' '
                        << rangeText(v.range) << '\n';
    } else if (auto *c = dyn_cast<GlobalParamDecl>(&d)) {
      param(c->param, depth);
    } else if (auto *c = dyn_cast<LayerDecl>(&d)) {
      line(depth) << "LayerDecl " << c->name << ' ' << rangeText(d.range()) << '\n';
      expr(*c->constructor, depth + 1);
    } else if (auto *c = dyn_cast<LayerDefDecl>(&d)) {
      line(depth) << "LayerDefDecl " << c->name << " ("
                  << joined(c->constants,
                            [](const LayerConstant &k) {
                              return k.name + ": " + spelling(k.kind) +
                                     (k.defaultValue ? " = " + toSource(*k.defaultValue) : "");
                            })
                  << ") " << rangeText(d.range()) << '\n';
      function(*c->apply, depth + 1);
    } else if (auto *c = dyn_cast<FunctionDecl>(&d)) {
      function(*c, depth);
    }
  }

  void function(const FunctionDecl &f, int depth) {
    line(depth) << (f.isModel() ? "ModelDecl " : "DefDecl ") << f.name << " ("
                << joined(f.params,
                          [](const Parameter &p) { return p.name + ": " + toSource(*p.type); })
                << ')';
    if (f.result)
      out_ << " -> " << toSource(*f.result);
    if (f.instance)
      out_ << " instance of " << f.instance->layer;
    out_ << ' ' << rangeText(f.range()) << '\n';
    if (f.exprBody)
      expr(*f.exprBody, depth + 1);
    for (const auto &s : f.body)
      stmt(*s, depth + 1);
  }

  void param(const ParamDecl &p, int depth) {
    line(depth) << "ParamDecl " << p.name << ": " << toSource(*p.type) << ' ' << rangeText(p.range)
                << '\n';
    if (p.init)
      expr(*p.init, depth + 1);
  }

  void stmt(const Stmt &s, int depth) {
    switch (s.kind()) {
    case StmtKind::Let: {
      auto &let = static_cast<const LetStmt &>(s);
      line(depth) << "LetStmt " << toSource(*let.pattern) << ' ' << rangeText(s.range()) << '\n';
      expr(*let.value, depth + 1);
      return;
    }
    case StmtKind::Return:
    case StmtKind::Loss:
    case StmtKind::Output: {
      const char *name = s.kind() == StmtKind::Return ? "ReturnStmt"
                         : s.kind() == StmtKind::Loss ? "LossStmt"
                                                      : "OutputStmt";
      line(depth) << name << ' ' << rangeText(s.range()) << '\n';
      expr(*static_cast<const ValueStmt &>(s).value, depth + 1);
      return;
    }
    case StmtKind::Metric: {
      auto &m = static_cast<const MetricStmt &>(s);
      line(depth) << "MetricStmt " << m.name << ' ' << rangeText(s.range()) << '\n';
      expr(*m.value, depth + 1);
      return;
    }
    case StmtKind::Param:
      param(static_cast<const ParamStmt &>(s).param, depth);
      return;
    case StmtKind::Layer: {
      auto &l = static_cast<const LayerStmt &>(s);
      line(depth) << "LayerStmt " << l.name << ' ' << rangeText(s.range()) << '\n';
      expr(*l.constructor, depth + 1);
      return;
    }
    }
  }

  void expr(const Expr &e, int depth) {
    std::ostream &os = line(depth);
    switch (e.kind()) {
    case ExprKind::IntLit:
      os << "IntLit " << static_cast<const IntLitExpr &>(e).value;
      break;
    case ExprKind::FloatLit:
      os << "FloatLit " << static_cast<const FloatLitExpr &>(e).spelling;
      break;
    case ExprKind::StringLit:
      os << "StringLit " << toSource(e);
      break;
    case ExprKind::BoolLit:
      os << "BoolLit " << toSource(e);
      break;
    case ExprKind::Name:
      os << "Name " << static_cast<const NameExpr &>(e).name;
      break;
    case ExprKind::Accessor:
      os << "Accessor ." << selectorText(static_cast<const AccessorExpr &>(e).selector);
      break;
    case ExprKind::Member:
      os << "Member ." << selectorText(static_cast<const MemberExpr &>(e).selector);
      break;
    case ExprKind::Call:
      os << "Call";
      break;
    case ExprKind::Index:
      os << "Index";
      break;
    case ExprKind::Slice:
      os << "Slice";
      break;
    case ExprKind::Subscripts:
      os << "Subscripts";
      break;
    case ExprKind::Neg:
      os << "Neg";
      break;
    case ExprKind::Not:
      os << "Not";
      break;
    case ExprKind::Binary:
      os << "Binary '" << spelling(static_cast<const BinaryExpr &>(e).op) << "'";
      break;
    case ExprKind::Pipe:
      os << "Pipe";
      break;
    case ExprKind::Arrow:
      os << "Arrow";
      break;
    case ExprKind::Lambda:
      os << "Lambda |"
         << joined(static_cast<const LambdaExpr &>(e).params,
                   [](const PatternPtr &p) { return toSource(*p); })
         << '|';
      break;
    case ExprKind::Tuple:
      os << "Tuple";
      break;
    case ExprKind::List:
      os << "List";
      break;
    case ExprKind::Match:
      os << "Match";
      break;
    case ExprKind::If:
      os << "If";
      break;
    }
    os << ' ' << rangeText(e.range()) << '\n';
    children(e, depth + 1);
  }

  void children(const Expr &e, int depth) {
    auto sub = [&](const ExprPtr &c) {
      if (c)
        expr(*c, depth);
    };
    if (auto *c = dyn_cast<MemberExpr>(&e)) {
      sub(c->base);
    } else if (auto *c = dyn_cast<CallExpr>(&e)) {
      sub(c->callee);
      for (const auto &a : c->args) {
        if (!a.name.empty()) {
          line(depth) << "NamedArg " << a.name << ' ' << rangeText(a.range) << '\n';
          expr(*a.value, depth + 1);
        } else {
          sub(a.value);
        }
      }
    } else if (auto *c = dyn_cast<IndexExpr>(&e)) {
      sub(c->base);
      sub(c->index);
    } else if (auto *c = dyn_cast<SubscriptsExpr>(&e)) {
      sub(c->base);
      for (const Subscript &s : c->subscripts) {
        if (!s.isRange()) {
          sub(s.index);
          continue;
        }
        line(depth) << "Range " << rangeText(s.range) << '\n';
        for (const ExprPtr *bound : {&s.lo, &s.hi}) {
          if (*bound)
            expr(**bound, depth + 1);
          else
            line(depth + 1) << "<open>\n";
        }
      }
    } else if (auto *c = dyn_cast<SliceExpr>(&e)) {
      sub(c->base);
      if (c->lo)
        sub(c->lo);
      else
        line(depth) << "<open>\n";
      if (c->hi)
        sub(c->hi);
      else
        line(depth) << "<open>\n";
    } else if (auto *c = dyn_cast<NegExpr>(&e)) {
      sub(c->operand);
    } else if (auto *c = dyn_cast<NotExpr>(&e)) {
      sub(c->operand);
    } else if (auto *c = dyn_cast<BinaryExpr>(&e)) {
      sub(c->lhs);
      sub(c->rhs);
    } else if (auto *c = dyn_cast<PipeExpr>(&e)) {
      sub(c->lhs);
      sub(c->rhs);
    } else if (auto *c = dyn_cast<ArrowExpr>(&e)) {
      sub(c->from);
      sub(c->to);
    } else if (auto *c = dyn_cast<LambdaExpr>(&e)) {
      sub(c->body);
    } else if (auto *c = dyn_cast<TupleExpr>(&e)) {
      for (const auto &x : c->elements)
        sub(x);
    } else if (auto *c = dyn_cast<ListExpr>(&e)) {
      for (const auto &x : c->elements)
        sub(x);
    } else if (auto *c = dyn_cast<MatchExpr>(&e)) {
      sub(c->scrutinee);
      for (const auto &arm : c->arms) {
        line(depth) << "Arm " << (arm.isDefault() ? "_" : arm.ctor)
                    << (arm.binder.empty() ? "" : " " + arm.binder) << ' ' << rangeText(arm.range)
                    << '\n';
        expr(*arm.body, depth + 1);
      }
    } else if (auto *c = dyn_cast<IfExpr>(&e)) {
      sub(c->cond);
      sub(c->thenExpr);
      sub(c->elseExpr);
    }
  }

  std::ostream &out_;
};

} // namespace

std::string toSource(const Pattern &pattern) {
  if (auto *p = dyn_cast<NamePattern>(&pattern))
    return p->name;
  if (auto *p = dyn_cast<TuplePattern>(&pattern))
    return "(" + joined(p->elements, [](const PatternPtr &e) { return toSource(*e); }) + ")";
  return "_";
}

std::string toSource(const TypeExpr &type) {
  if (auto *t = dyn_cast<HostScalarTypeExpr>(&type))
    return hostScalarName(t->scalar);
  if (auto *t = dyn_cast<TensorTypeExpr>(&type)) {
    std::string out = t->element == ElementType::F32 ? "f32" : "i32";
    if (!t->dims.empty())
      out += "[" + joined(t->dims, [](const ExprPtr &d) { return toSource(*d); }) + "]";
    return out;
  }
  if (auto *t = dyn_cast<TupleTypeExpr>(&type))
    return "(" + joined(t->elements, [](const TypeExprPtr &e) { return toSource(*e); }) + ")";
  if (auto *t = dyn_cast<ListTypeExpr>(&type))
    return "[" + toSource(*t->element) + "]";
  if (auto *t = dyn_cast<OptionalTypeExpr>(&type)) {
    bool wrap = isa<BlockTypeExpr>(t->element.get());
    return (wrap ? "(" + toSource(*t->element) + ")" : toSource(*t->element)) + "?";
  }
  if (auto *t = dyn_cast<BlockTypeExpr>(&type)) {
    bool wrap = isa<BlockTypeExpr>(t->input.get());
    std::string in = toSource(*t->input);
    return (wrap ? "(" + in + ")" : in) + " -> " + toSource(*t->output);
  }
  if (auto *t = dyn_cast<RecordTypeExpr>(&type))
    return fieldsText(t->fields);
  return static_cast<const NamedTypeExpr &>(type).name;
}

namespace {

/// Writes an expression's source text left to right into one string, so
/// that printing is linear in the text's length (returning and concatenating
/// each subexpression's text made a chain n deep cost n^2). Past `limit`
/// characters it stops descending and ends the text with "...".
class SourceWriter {
public:
  explicit SourceWriter(size_t limit) : limit_(limit) {}

  void expr(const Expr &e) {
    if (full())
      return;
    switch (e.kind()) {
    case ExprKind::IntLit:
      return put(std::to_string(static_cast<const IntLitExpr &>(e).value));
    case ExprKind::FloatLit:
      return put(static_cast<const FloatLitExpr &>(e).spelling);
    case ExprKind::StringLit:
      return put(quoted(static_cast<const StringLitExpr &>(e).value));
    case ExprKind::BoolLit:
      return put(static_cast<const BoolLitExpr &>(e).value ? "true" : "false");
    case ExprKind::Name:
      return put(static_cast<const NameExpr &>(e).name);
    case ExprKind::Accessor:
      return put("." + selectorText(static_cast<const AccessorExpr &>(e).selector));
    case ExprKind::Member: {
      auto &m = static_cast<const MemberExpr &>(e);
      operand(*m.base, 9);
      return put("." + selectorText(m.selector));
    }
    case ExprKind::Call: {
      auto &c = static_cast<const CallExpr &>(e);
      operand(*c.callee, 9);
      put("(");
      list(c.args, [this](const Argument &a) {
        if (!a.name.empty())
          put(a.name + ": ");
        expr(*a.value);
      });
      return put(")");
    }
    case ExprKind::Index: {
      auto &i = static_cast<const IndexExpr &>(e);
      operand(*i.base, 9);
      put("[");
      expr(*i.index);
      return put("]");
    }
    case ExprKind::Slice: {
      auto &x = static_cast<const SliceExpr &>(e);
      operand(*x.base, 9);
      put("[");
      range(x.lo.get(), x.hi.get());
      return put("]");
    }
    case ExprKind::Subscripts: {
      auto &x = static_cast<const SubscriptsExpr &>(e);
      operand(*x.base, 9);
      put("[");
      list(x.subscripts, [this](const Subscript &s) {
        if (s.isRange())
          range(s.lo.get(), s.hi.get());
        else
          expr(*s.index);
      });
      return put("]");
    }
    case ExprKind::Neg:
      put("-");
      return operand(*static_cast<const NegExpr &>(e).operand, 8);
    case ExprKind::Not:
      put("!");
      return operand(*static_cast<const NotExpr &>(e).operand, 8);
    case ExprKind::Binary: {
      auto &b = static_cast<const BinaryExpr &>(e);
      int p = precedence(e);
      operand(*b.lhs, p);
      put(std::string(" ") + spelling(b.op) + " ");
      return operand(*b.rhs, p + 1);
    }
    case ExprKind::Pipe: {
      auto &p = static_cast<const PipeExpr &>(e);
      operand(*p.lhs, 2);
      put(" >> ");
      return operand(*p.rhs, 3);
    }
    case ExprKind::Arrow: {
      auto &a = static_cast<const ArrowExpr &>(e);
      expr(*a.from);
      put(" -> ");
      return expr(*a.to);
    }
    case ExprKind::Lambda: {
      auto &l = static_cast<const LambdaExpr &>(e);
      put("|" + joined(l.params, [](const PatternPtr &p) { return toSource(*p); }) + "| ");
      return expr(*l.body);
    }
    case ExprKind::Tuple:
      put("(");
      list(static_cast<const TupleExpr &>(e).elements, [this](const ExprPtr &x) { expr(*x); });
      return put(")");
    case ExprKind::List:
      put("[");
      list(static_cast<const ListExpr &>(e).elements, [this](const ExprPtr &x) { expr(*x); });
      return put("]");
    case ExprKind::Match:
      put("match ");
      expr(*static_cast<const MatchExpr &>(e).scrutinee);
      return put(" {...}");
    case ExprKind::If:
      put("if ");
      expr(*static_cast<const IfExpr &>(e).cond);
      return put(" {...} else {...}");
    }
    put("?");
  }

  std::string take() { return std::move(text_); }

private:
  bool full() const { return text_.size() > limit_; }
  /// Appends `piece`; the first time the text passes the limit, cuts it
  /// there and marks it abbreviated.
  void put(const std::string &piece) {
    if (full())
      return;
    text_ += piece;
    if (full())
      text_.resize(limit_ + 1), text_.replace(limit_, 1, "...");
  }
  void operand(const Expr &e, int context) {
    bool parenthesised = precedence(e) < context;
    if (parenthesised)
      put("(");
    expr(e);
    if (parenthesised)
      put(")");
  }
  template <typename Range, typename Print> void list(const Range &items, Print print) {
    bool first = true;
    for (const auto &item : items) {
      if (full())
        return;
      if (!first)
        put(", ");
      first = false;
      print(item);
    }
  }
  void range(const Expr *lo, const Expr *hi) {
    if (lo)
      expr(*lo);
    put(":");
    if (hi)
      expr(*hi);
  }

  size_t limit_;
  std::string text_;
};

} // namespace

std::string toSource(const Expr &e) {
  // No limit: the largest one whose cut ("..." past it) cannot overflow.
  return toSource(e, std::string::npos - 4);
}

std::string toSource(const Expr &e, size_t limit) {
  SourceWriter writer(limit);
  writer.expr(e);
  return writer.take();
}

void dumpAST(const Module &module, std::ostream &out) { Dumper(out).module(module); }

} // namespace foldc
