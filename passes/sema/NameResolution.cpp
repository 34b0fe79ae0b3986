// Name resolution over the whole module, with lexical scopes for locals.
#include "passes/sema/NameResolution.h"

#include "passes/builtins/Builtins.h"
#include "passes/sema/InstantiateLayers.h"

#include <algorithm>
#include <vector>

namespace foldc {

namespace {

/// One lexical scope: names bound in it and where.
struct Scope {
  struct Binding {
    const void *site;
    SourceRange range;
  };
  std::unordered_map<std::string, Binding> names;
};

class Resolver {
public:
  Resolver(ResolvedNames &out, DiagnosticEngine &diag) : out_(out), diag_(diag) {}

  void run(const Module &module, const std::vector<HostFunction> &hostFunctions) {
    for (size_t i = 0; i < hostFunctions.size(); ++i) {
      const HostFunction &f = hostFunctions[i];
      auto [it, inserted] = out_.hostFunctions.emplace(f.name, int(i));
      if (!inserted) {
        diag_.error(f.import->nameRange) << "'" << f.name << "' is imported twice";
        diag_.note(hostFunctions[size_t(it->second)].import->nameRange) << "first imported here";
      }
    }
    hostFunctions_ = &hostFunctions;
    failedInstances_ = &module.failedInstances;
    for (const DeclPtr &decl : module.decls)
      declareGlobal(*decl);
    for (const DeclPtr &decl : module.decls)
      resolveDecl(*decl);
  }

private:
  void redefinition(const std::string &name, SourceRange here, SourceRange previous) {
    diag_.error(here) << "redefinition of '" << name << "'";
    diag_.note(previous) << "previous definition of '" << name << "' is here";
  }

  void declareGlobal(const Decl &decl) {
    if (auto *data = dyn_cast<DataDecl>(&decl)) {
      declareData(*data);
      return;
    }
    if (isa<ImportDecl>(&decl))
      return;
    if (auto host = out_.hostFunctions.find(decl.name); host != out_.hostFunctions.end()) {
      diag_.error(decl.nameRange) << "redefinition of '" << decl.name << "'";
      diag_.note((*hostFunctions_)[size_t(host->second)].import->nameRange)
          << "'" << decl.name << "' is imported here";
      return;
    }
    auto [it, inserted] = out_.globals.emplace(decl.name, &decl);
    if (!inserted) {
      redefinition(decl.name, decl.nameRange, it->second->nameRange);
      return;
    }
    if (decl.kind() == DeclKind::Model) {
      if (out_.model) {
        diag_.error(decl.nameRange)
            << "a program has one model; '" << decl.name << "' is a second one";
        diag_.note(out_.model->nameRange) << "the first model is '" << out_.model->name << "'";
      } else {
        out_.model = static_cast<const FunctionDecl *>(&decl);
      }
    }
  }

  void declareData(const DataDecl &data) {
    auto [it, inserted] = out_.dataTypes.emplace(data.name, &data);
    if (!inserted) {
      redefinition(data.name, data.nameRange, it->second->nameRange);
      return;
    }
    if (data.isRecord)
      return;
    for (size_t i = 0; i < data.variants.size(); ++i) {
      const VariantDecl &v = data.variants[i];
      auto [vit, vinserted] = out_.variants.emplace(v.name, VariantRef{&data, int(i)});
      if (!vinserted)
        redefinition(v.name, v.range, vit->second.data->variants[vit->second.index].range);
    }
  }

  void resolveDecl(const Decl &decl) {
    switch (decl.kind()) {
    case DeclKind::Import:
      return;
    case DeclKind::Const:
      resolveExpr(*static_cast<const ConstDecl &>(decl).value);
      return;
    case DeclKind::Data:
      for (const VariantDecl &v : static_cast<const DataDecl &>(decl).variants)
        resolveFields(v.fields);
      return;
    case DeclKind::Param:
      resolveParam(static_cast<const GlobalParamDecl &>(decl).param);
      return;
    case DeclKind::Layer:
      resolveLayerConstructor(*static_cast<const LayerDecl &>(decl).constructor);
      return;
    case DeclKind::LayerDef: // only its instances (copies) are resolved
      return;
    case DeclKind::Def:
    case DeclKind::Model:
      resolveFunction(static_cast<const FunctionDecl &>(decl));
      return;
    }
  }

  void resolveFields(const std::vector<FieldDecl> &fields) {
    std::unordered_map<std::string, SourceRange> seen;
    for (const FieldDecl &f : fields) {
      auto [it, inserted] = seen.emplace(f.name, f.range);
      if (!inserted)
        redefinition(f.name, f.range, it->second);
      resolveType(*f.type);
    }
  }

  void resolveParam(const ParamDecl &param) {
    resolveType(*param.type);
    if (param.init)
      resolveInitializer(*param.init, false);
  }

  void bindBuiltin(const NameExpr &name, const BuiltinName &row) {
    Symbol symbol{Symbol::Kind::Builtin, nullptr, nullptr, row};
    out_.names[&name] = symbol;
  }

  /// An initialiser (a param's `= uniform(a, b)`, an embedding's `init:`):
  /// its name is a row of the initialiser table (`zeros` there is not the
  /// function). Anything else is resolved as an expression, for the checker
  /// to report, except a bare name given to an option (a keyword).
  void resolveInitializer(const Expr &init, bool bareNameIsKeyword) {
    const NameExpr *name = dyn_cast<NameExpr>(&init);
    const CallExpr *call = dyn_cast<CallExpr>(&init);
    if (call)
      name = dyn_cast<NameExpr>(call->callee.get());
    std::optional<BuiltinName> row =
        name ? builtinIn(BuiltinName::Table::Initializer, name->name) : std::nullopt;
    if (!row) {
      if (!(bareNameIsKeyword && isa<NameExpr>(&init)))
        resolveExpr(init);
      return;
    }
    bindBuiltin(*name, *row);
    if (call)
      for (const Argument &a : call->args)
        resolveArgument(a);
  }

  void resolveFunction(const FunctionDecl &fn) {
    DiagnosticContext where = instanceContext(diag_, fn);
    scopes_.emplace_back();
    for (const Parameter &p : fn.params) {
      resolveType(*p.type);
      bind(p.name, &p, p.range);
    }
    if (fn.result)
      resolveType(*fn.result);
    if (fn.exprBody)
      resolveExpr(*fn.exprBody);
    for (const StmtPtr &s : fn.body)
      resolveStmt(*s);
    scopes_.pop_back();
    if (fn.instance)
      for (const Argument &option : fn.instance->options)
        resolveArgument(option);
  }

  void resolveStmt(const Stmt &stmt) {
    switch (stmt.kind()) {
    case StmtKind::Let: {
      auto &let = static_cast<const LetStmt &>(stmt);
      resolveExpr(*let.value); // the value cannot see the names it binds
      bindPattern(*let.pattern);
      return;
    }
    case StmtKind::Return:
    case StmtKind::Loss:
    case StmtKind::Output:
      resolveExpr(*static_cast<const ValueStmt &>(stmt).value);
      return;
    case StmtKind::Metric:
      resolveExpr(*static_cast<const MetricStmt &>(stmt).value);
      return;
    case StmtKind::Param: {
      const ParamDecl &p = static_cast<const ParamStmt &>(stmt).param;
      resolveParam(p);
      bind(p.name, &p, p.nameRange);
      return;
    }
    case StmtKind::Layer: // outside a layer definition: reported by instantiation
      return;
    }
  }

  void bind(const std::string &name, const void *site, SourceRange range) {
    auto [it, inserted] = scopes_.back().names.emplace(name, Scope::Binding{site, range});
    if (!inserted)
      redefinition(name, range, it->second.range);
  }

  void bindPattern(const Pattern &pattern) {
    if (auto *p = dyn_cast<NamePattern>(&pattern))
      bind(p->name, p, p->range());
    else if (auto *t = dyn_cast<TuplePattern>(&pattern))
      for (const PatternPtr &e : t->elements)
        bindPattern(*e);
  }

  void resolveName(const NameExpr &name) {
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
      auto it = scope->names.find(name.name);
      if (it != scope->names.end()) {
        out_.names[&name] = Symbol{Symbol::Kind::Local, nullptr, it->second.site, {}};
        return;
      }
    }
    if (auto it = out_.globals.find(name.name); it != out_.globals.end()) {
      if (it->second->kind() == DeclKind::LayerDef) {
        diag_.error(name.range()) << "'" << name.name
                                  << "' is a layer definition, not a layer: make an instance "
                                     "and use that (layer NAME = "
                                  << name.name << "(...);)";
        diag_.note(it->second->nameRange) << "'" << name.name << "' is defined here";
        return;
      }
      out_.names[&name] = Symbol{globalKind(*it->second), it->second, nullptr, {}};
      return;
    }
    if (auto host = out_.hostFunctions.find(name.name); host != out_.hostFunctions.end()) {
      Symbol symbol{Symbol::Kind::HostFunction, nullptr, nullptr, {}};
      symbol.hostFunction = host->second;
      out_.names[&name] = symbol;
      return;
    }
    if (std::optional<BuiltinName> row = resolveBuiltinName(name.name)) {
      bindBuiltin(name, *row);
      return;
    }
    if (std::count(failedInstances_->begin(), failedInstances_->end(), name.name))
      return; // its instantiation failed, and said why
    auto error = diag_.error(name.range());
    error << "use of undeclared name '" << name.name << "'";
    if (out_.dataTypes.count(name.name) || out_.variants.count(name.name))
      error << "; '" << name.name << "' is a data type or variant, not a value";
  }

  static Symbol::Kind globalKind(const Decl &decl) {
    switch (decl.kind()) {
    case DeclKind::Const:
      return Symbol::Kind::Const;
    case DeclKind::Param:
      return Symbol::Kind::Param;
    case DeclKind::Layer:
      return Symbol::Kind::Layer;
    case DeclKind::Model:
      return Symbol::Kind::Model;
    case DeclKind::Import:
    case DeclKind::Data:
    case DeclKind::LayerDef:
    case DeclKind::Def:
      return Symbol::Kind::Def;
    }
    return Symbol::Kind::Def;
  }

  void resolveExpr(const Expr &expr) {
    switch (expr.kind()) {
    case ExprKind::Name:
      resolveName(static_cast<const NameExpr &>(expr));
      return;
    case ExprKind::Member:
      resolveExpr(*static_cast<const MemberExpr &>(expr).base);
      return;
    case ExprKind::Call: {
      auto &call = static_cast<const CallExpr &>(expr);
      resolveExpr(*call.callee);
      for (const Argument &a : call.args)
        resolveArgument(a);
      return;
    }
    case ExprKind::Index: {
      auto &e = static_cast<const IndexExpr &>(expr);
      resolveExpr(*e.base);
      resolveExpr(*e.index);
      return;
    }
    case ExprKind::Slice: {
      auto &e = static_cast<const SliceExpr &>(expr);
      resolveExpr(*e.base);
      if (e.lo)
        resolveExpr(*e.lo);
      if (e.hi)
        resolveExpr(*e.hi);
      return;
    }
    case ExprKind::Subscripts: {
      auto &e = static_cast<const SubscriptsExpr &>(expr);
      resolveExpr(*e.base);
      for (const Subscript &s : e.subscripts)
        for (const ExprPtr *part : {&s.index, &s.lo, &s.hi})
          if (*part)
            resolveExpr(**part);
      return;
    }
    case ExprKind::Neg:
      resolveExpr(*static_cast<const NegExpr &>(expr).operand);
      return;
    case ExprKind::Not:
      resolveExpr(*static_cast<const NotExpr &>(expr).operand);
      return;
    case ExprKind::Binary: {
      auto &e = static_cast<const BinaryExpr &>(expr);
      resolveExpr(*e.lhs);
      resolveExpr(*e.rhs);
      return;
    }
    case ExprKind::Pipe: {
      auto &e = static_cast<const PipeExpr &>(expr);
      resolveExpr(*e.lhs);
      resolveExpr(*e.rhs);
      return;
    }
    case ExprKind::Arrow: {
      auto &e = static_cast<const ArrowExpr &>(expr);
      resolveExpr(*e.from);
      resolveExpr(*e.to);
      return;
    }
    case ExprKind::Lambda: {
      auto &e = static_cast<const LambdaExpr &>(expr);
      scopes_.emplace_back();
      for (const PatternPtr &p : e.params)
        bindPattern(*p);
      resolveExpr(*e.body);
      scopes_.pop_back();
      return;
    }
    case ExprKind::Tuple:
      for (const ExprPtr &x : static_cast<const TupleExpr &>(expr).elements)
        resolveExpr(*x);
      return;
    case ExprKind::List:
      for (const ExprPtr &x : static_cast<const ListExpr &>(expr).elements)
        resolveExpr(*x);
      return;
    case ExprKind::Match: {
      auto &m = static_cast<const MatchExpr &>(expr);
      resolveExpr(*m.scrutinee);
      for (const MatchArm &arm : m.arms) {
        scopes_.emplace_back();
        if (!arm.binder.empty())
          bind(arm.binder, &arm, arm.patternRange);
        resolveExpr(*arm.body);
        scopes_.pop_back();
      }
      return;
    }
    case ExprKind::If: {
      auto &e = static_cast<const IfExpr &>(expr);
      resolveExpr(*e.cond);
      resolveExpr(*e.thenExpr);
      resolveExpr(*e.elseExpr);
      return;
    }
    case ExprKind::IntLit:
    case ExprKind::FloatLit:
    case ExprKind::StringLit:
    case ExprKind::BoolLit:
    case ExprKind::Accessor: // literals and accessor blocks name nothing
      return;
    }
  }

  /// The constructor's name (`fc`) is checked with the layer; only its
  /// arguments can name consts.
  /// `fc(in -> out, act: relu)`: the callee is a row of the layer table.
  void resolveLayerConstructor(const Expr &constructor) {
    auto *call = dyn_cast<CallExpr>(&constructor);
    auto *callee = call ? dyn_cast<NameExpr>(call->callee.get()) : nullptr;
    if (!callee) {
      resolveExpr(constructor);
      return;
    }
    if (auto row = builtinIn(BuiltinName::Table::LayerConstructor, callee->name))
      bindBuiltin(*callee, *row);
    for (const Argument &a : call->args)
      resolveArgument(a);
  }

  /// A named argument's name is looked up in the option table once, here.
  /// An initialiser option (`init: glorot`) has its name resolved in the
  /// initialisers' table; a value option (`axis:`, `lr_scale:`) has an
  /// expression (a const, say).
  void resolveArgument(const Argument &arg) {
    if (arg.name.empty()) {
      resolveExpr(*arg.value);
      return;
    }
    std::optional<Option> option = optionNamed(arg.name);
    if (option)
      out_.options[&arg] = *option;
    OptionTakes takes = option ? optionInfo(*option).takes : OptionTakes::Bool;
    auto *bare = dyn_cast<NameExpr>(arg.value.get());
    switch (takes) {
    case OptionTakes::Value:
      resolveExpr(*arg.value);
      return;
    case OptionTakes::Initializer:
      resolveInitializer(*arg.value, true);
      return;
    case OptionTakes::Bool: // true or false; an unknown option's bare name is the checker's
      if (!bare)
        resolveExpr(*arg.value);
      return;
    }
  }

  void resolveType(const TypeExpr &type) {
    switch (type.kind()) {
    case TypeExprKind::Named: {
      auto &named = static_cast<const NamedTypeExpr &>(type);
      auto it = out_.dataTypes.find(named.name);
      if (it == out_.dataTypes.end()) {
        auto error = diag_.error(type.range());
        error << "unknown type '" << named.name << "'";
        if (auto v = out_.variants.find(named.name); v != out_.variants.end())
          error << "; '" << named.name << "' is a variant of '" << v->second.data->name << "'";
        return;
      }
      out_.typeNames[&named] = it->second;
      return;
    }
    case TypeExprKind::Tensor:
      for (const ExprPtr &d : static_cast<const TensorTypeExpr &>(type).dims)
        resolveExpr(*d);
      return;
    case TypeExprKind::Tuple:
      for (const TypeExprPtr &e : static_cast<const TupleTypeExpr &>(type).elements)
        resolveType(*e);
      return;
    case TypeExprKind::List:
      resolveType(*static_cast<const ListTypeExpr &>(type).element);
      return;
    case TypeExprKind::Optional:
      resolveType(*static_cast<const OptionalTypeExpr &>(type).element);
      return;
    case TypeExprKind::Block: {
      auto &b = static_cast<const BlockTypeExpr &>(type);
      resolveType(*b.input);
      resolveType(*b.output);
      return;
    }
    case TypeExprKind::Record:
      resolveFields(static_cast<const RecordTypeExpr &>(type).fields);
      return;
    case TypeExprKind::HostScalar:
      return;
    }
  }

  ResolvedNames &out_;
  DiagnosticEngine &diag_;
  std::vector<Scope> scopes_;
  const std::vector<HostFunction> *hostFunctions_ = nullptr;
  const std::vector<std::string> *failedInstances_ = nullptr;
};

} // namespace

ResolvedNames resolveNames(const Module &module, const std::vector<HostFunction> &hostFunctions,
                           DiagnosticEngine &diag) {
  ResolvedNames names;
  Resolver(names, diag).run(module, hostFunctions);
  return names;
}

} // namespace foldc
