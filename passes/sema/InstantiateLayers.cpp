// Layer instantiation (see InstantiateLayers.h). It runs before name
// resolution, so it looks layer definitions and option names up itself.
#include "passes/sema/InstantiateLayers.h"

#include "frontend/ASTClone.h"
#include "frontend/ASTPrinter.h"
#include "passes/builtins/Builtins.h"

#include <map>
#include <set>

namespace foldc {

namespace {

/// One instance to make: its path, where it is named, its constructor call
/// and the options of the instances around it.
struct Instance {
  std::string path;
  SourceRange nameRange;
  const CallExpr *call;
  const LayerDefDecl *layer;
  std::map<Option, const Argument *> inherited;
};

/// What an instance's arguments say: an expression per constant (null:
/// its default) and its options, its own over those it inherits.
struct BoundArguments {
  std::vector<const Expr *> constants;
  std::map<Option, const Argument *> options;
};

std::string constantsText(const LayerDefDecl &layer) {
  std::vector<std::string> parts;
  for (const LayerConstant &k : layer.constants)
    parts.push_back(k.name + ": " + spelling(k.kind));
  return "(" + listedWithAnd(parts) + ")";
}

/// `|v| v`: the activation `none` as a block.
ExprPtr identityBlock(SourceRange range) {
  std::vector<PatternPtr> params;
  params.push_back(std::make_unique<NamePattern>(range, "v"));
  return std::make_unique<LambdaExpr>(range, std::move(params),
                                      std::make_unique<NameExpr>(range, "v"));
}

class Instantiator {
public:
  explicit Instantiator(DiagnosticEngine &diag) : diag_(diag) {}

  std::unique_ptr<Module> run(std::unique_ptr<Module> parsed, std::unique_ptr<Module> prelude) {
    if (prelude)
      addPrelude(*parsed, *prelude);
    for (const DeclPtr &d : parsed->decls)
      if (auto *layer = dyn_cast<LayerDefDecl>(d.get())) {
        definitions_.emplace(layer->name, layer);
        checkMemberNames(*layer);
      } else if (auto *fn = dyn_cast<FunctionDecl>(d.get())) {
        reportLayerStatements(*fn);
      }
    auto module = std::make_unique<Module>();
    module->fileName = parsed->fileName;
    for (DeclPtr &d : parsed->decls) {
      auto *layer = dyn_cast<LayerDecl>(d.get());
      const LayerDefDecl *definition = layer ? definitionCalled(*layer->constructor) : nullptr;
      if (!definition) {
        module->decls.push_back(std::move(d));
        continue;
      }
      auto [first, unique] = instanceNames_.emplace(layer->name, layer->nameRange);
      if (!unique) {
        diag_.error(layer->nameRange) << "redefinition of '" << layer->name << "'";
        diag_.note(first->second) << "previous definition of '" << layer->name << "' is here";
        continue;
      }
      Instance instance{layer->name,
                        layer->nameRange,
                        static_cast<const CallExpr *>(layer->constructor.get()),
                        definition,
                        {}};
      instantiate(instance, module->decls);
    }
    for (const auto &[name, layer] : definitions_)
      if (!used_.count(layer) && !prelude_.count(layer))
        diag_.warning(layer->nameRange)
            << "layer '" << name << "' is defined but never instantiated, so its body is not "
            << "checked (make an instance: layer NAME = " << name << "(...);)";
    module->failedInstances = std::move(failed_);
    return module;
  }

private:
  /// The prelude's definitions go first into the program, but for those
  /// whose names the program declares itself (its own `layer lstm(...)`, a
  /// `def gru`): the program's replace them.
  void addPrelude(Module &program, Module &prelude) {
    std::set<std::string> declared;
    for (const DeclPtr &d : program.decls)
      declared.insert(d->name);
    std::vector<DeclPtr> decls;
    for (DeclPtr &d : prelude.decls)
      if (auto *layer = dyn_cast<LayerDefDecl>(d.get()); layer && !declared.count(layer->name)) {
        prelude_.insert(layer);
        decls.push_back(std::move(d));
      }
    for (DeclPtr &d : program.decls)
      decls.push_back(std::move(d));
    program.decls = std::move(decls);
  }

  const LayerDefDecl *definitionCalled(const Expr &constructor) const {
    auto *call = dyn_cast<CallExpr>(&constructor);
    auto *callee = call ? dyn_cast<NameExpr>(call->callee.get()) : nullptr;
    if (!callee)
      return nullptr;
    auto it = definitions_.find(callee->name);
    return it == definitions_.end() ? nullptr : it->second;
  }

  /// A layer definition's constants and inner layers share one namespace.
  void checkMemberNames(const LayerDefDecl &layer) {
    std::map<std::string, SourceRange> seen;
    auto declare = [&](const std::string &name, SourceRange range) {
      auto [it, inserted] = seen.emplace(name, range);
      if (!inserted) {
        diag_.error(range) << "redefinition of '" << name << "' in layer '" << layer.name << "'";
        diag_.note(it->second) << "previous definition of '" << name << "' is here";
      }
    };
    for (const LayerConstant &k : layer.constants)
      declare(k.name, k.nameRange);
    for (const StmtPtr &s : layer.apply->body)
      if (auto *inner = dyn_cast<LayerStmt>(s.get()))
        declare(inner->name, inner->nameRange);
  }

  void reportLayerStatements(const FunctionDecl &fn) {
    for (const StmtPtr &s : fn.body)
      if (auto *inner = dyn_cast<LayerStmt>(s.get()))
        diag_.error(inner->range())
            << "a 'layer' statement belongs in a layer definition; declare '" << inner->name
            << "' at the top level, or make '" << fn.name << "' a layer definition (layer "
            << fn.name << "(constants)(parameters) { ... })";
  }

  void instantiate(const Instance &instance, std::vector<DeclPtr> &out) {
    const LayerDefDecl &layer = *instance.layer;
    used_.insert(&layer);
    for (const LayerDefDecl *enclosing : stack_)
      if (enclosing == &layer) {
        diag_.error(instance.call->range())
            << "layer '" << layer.name << "' contains an instance of itself ('" << instance.path
            << "'); a layer's instances are made when it is, so this would never end";
        diag_.note(layer.nameRange) << "'" << layer.name << "' is defined here";
        failed_.push_back(instance.path);
        return;
      }
    BoundArguments bound;
    if (!bindArguments(instance, bound)) {
      failed_.push_back(instance.path);
      return;
    }
    stack_.push_back(&layer);
    expand(instance, bound, out);
    stack_.pop_back();
  }

  bool bindArguments(const Instance &instance, BoundArguments &bound) {
    const LayerDefDecl &layer = *instance.layer;
    std::vector<const Expr *> positional;
    std::vector<const Argument *> named;
    for (const Argument &arg : instance.call->args) {
      if (!arg.name.empty())
        named.push_back(&arg);
      else if (auto *arrow = dyn_cast<ArrowExpr>(arg.value.get()))
        positional.insert(positional.end(), {arrow->from.get(), arrow->to.get()});
      else
        positional.push_back(arg.value.get());
    }
    if (positional.size() > layer.constants.size()) {
      diag_.error(instance.call->range())
          << "'" << layer.name << "' takes " << layer.constants.size() << " constant"
          << (layer.constants.size() == 1 ? "" : "s") << " " << constantsText(layer) << ", found "
          << positional.size();
      diag_.note(layer.nameRange) << "'" << layer.name << "' is defined here";
      return false;
    }
    bound.constants = positional;
    bound.constants.resize(layer.constants.size(), nullptr);
    bool ok = true;
    for (const Argument *arg : named)
      ok &= bindNamed(instance, *arg, bound);
    for (size_t i = 0; i < layer.constants.size(); ++i)
      ok &= checkConstant(instance, layer.constants[i], bound.constants[i]);
    for (const auto &[option, arg] : instance.inherited)
      bound.options.emplace(option, arg);
    return ok;
  }

  bool bindNamed(const Instance &instance, const Argument &arg, BoundArguments &bound) {
    const LayerDefDecl &layer = *instance.layer;
    for (size_t i = 0; i < layer.constants.size(); ++i)
      if (layer.constants[i].name == arg.name) {
        if (bound.constants[i]) {
          diag_.error(arg.range) << "'" << arg.name << "' of '" << layer.name << "' is given twice";
          return false;
        }
        bound.constants[i] = arg.value.get();
        return true;
      }
    std::optional<Option> option = optionNamed(arg.name);
    if (option &&
        (*option == Option::Trainable || *option == Option::LrScale || *option == Option::Init)) {
      bound.options[*option] = &arg;
      return true;
    }
    diag_.error(arg.range) << "'" << layer.name << "' has no constant or option '" << arg.name
                           << "' (its constants are " << constantsText(layer)
                           << "; every instance takes trainable:, lr_scale: and init:)";
    diag_.note(layer.nameRange) << "'" << layer.name << "' is defined here";
    return false;
  }

  /// Whether `given` (or the default) fits the constant's kind; ints and
  /// floats are checked when evaluated.
  bool checkConstant(const Instance &instance, const LayerConstant &constant, const Expr *given) {
    const LayerDefDecl &layer = *instance.layer;
    if (!given && !constant.defaultValue) {
      diag_.error(instance.call->range())
          << "'" << layer.name << "' needs a value for '" << constant.name << "' ("
          << spelling(constant.kind) << ")";
      diag_.note(constant.range) << "'" << constant.name << "' is declared here";
      return false;
    }
    if (!given)
      return true;
    bool fits = true;
    const char *expected = "";
    switch (constant.kind) {
    case LayerConstantKind::Int:
    case LayerConstantKind::Float:
      return true;
    case LayerConstantKind::Activation:
      fits = isa<NameExpr>(given) || isa<LambdaExpr>(given);
      expected = "an activation (a function's name, such as tanh or none, or a lambda)";
      break;
    case LayerConstantKind::Initializer: {
      auto *call = dyn_cast<CallExpr>(given);
      fits = isa<NameExpr>(given) || (call && isa<NameExpr>(call->callee.get()));
      expected = "an initialiser (zeros, ones, uniform(a, b), normal(std), glorot or constant(v))";
      break;
    }
    }
    if (!fits) {
      diag_.error(given->range()) << "'" << constant.name << "' of '" << layer.name << "' is "
                                  << expected << ", found '" << toSource(*given) << "'";
      diag_.note(constant.range) << "'" << constant.name << "' is declared here";
    }
    return fits;
  }

  /// The declarations of one instance whose arguments are bound.
  void expand(const Instance &instance, const BoundArguments &bound, std::vector<DeclPtr> &out) {
    const LayerDefDecl &layer = *instance.layer;
    std::map<std::string, std::function<ExprPtr(SourceRange)>> replacements;
    for (const StmtPtr &s : layer.apply->body)
      if (auto *inner = dyn_cast<LayerStmt>(s.get()))
        replacements[inner->name] = renamedTo(instance.path + "." + inner->name);
    ASTCloner copy([&](const NameExpr &name) -> ExprPtr {
      auto it = replacements.find(name.name);
      return it == replacements.end() ? nullptr : it->second(name.range());
    });
    for (size_t i = 0; i < layer.constants.size(); ++i)
      replacements[layer.constants[i].name] =
          constantValue(instance, layer.constants[i], bound.constants[i], copy, out);
    for (const StmtPtr &s : layer.apply->body)
      if (auto *inner = dyn_cast<LayerStmt>(s.get()))
        expandInner(instance, *inner, bound, copy, out);
    auto apply = copy.function(*layer.apply, instance.path, instance.nameRange,
                               [](const Stmt &s) { return !isa<LayerStmt>(&s); });
    // The options are written where the instance is made: copied verbatim,
    // never renamed by this definition's constants.
    ASTCloner verbatim = ASTCloner::exact();
    if (auto init = bound.options.find(Option::Init); init != bound.options.end())
      for (StmtPtr &s : apply->body)
        if (s->kind() == StmtKind::Param && !static_cast<ParamStmt &>(*s).param.init)
          static_cast<ParamStmt &>(*s).param.init = verbatim.expr(*init->second->value);
    apply->instance = std::make_unique<InstanceOrigin>();
    apply->instance->layer = layer.name;
    apply->instance->made = instance.nameRange;
    apply->instance->prelude = prelude_.count(&layer) != 0;
    for (const auto &[option, arg] : bound.options)
      if (option != Option::Init)
        apply->instance->options.push_back(verbatim.argument(*arg));
    out.push_back(std::move(apply));
  }

  static std::function<ExprPtr(SourceRange)> renamedTo(std::string name) {
    return [name](SourceRange at) { return std::make_unique<NameExpr>(at, name); };
  }

  /// What a constant's name becomes in the copy: a `const PATH.K` for an int
  /// or a float (declared here), the expression given for the others.
  std::function<ExprPtr(SourceRange)> constantValue(const Instance &instance,
                                                    const LayerConstant &constant,
                                                    const Expr *given, ASTCloner &copy,
                                                    std::vector<DeclPtr> &out) {
    ASTCloner verbatim = ASTCloner::exact();
    std::string path = instance.path + "." + constant.name;
    switch (constant.kind) {
    case LayerConstantKind::Int:
    case LayerConstantKind::Float: {
      ExprPtr value = given ? verbatim.expr(*given) : copy.expr(*constant.defaultValue);
      SourceRange at = given ? given->range() : instance.call->range();
      auto decl = std::make_unique<ConstDecl>(at, path, instance.nameRange, std::move(value));
      decl->required = constant.kind == LayerConstantKind::Int ? ConstKind::Int : ConstKind::Float;
      decl->requiredAt = constant.range;
      out.push_back(std::move(decl));
      return renamedTo(path);
    }
    case LayerConstantKind::Activation:
    case LayerConstantKind::Initializer:
      break;
    }
    const Expr &value = given ? *given : *constant.defaultValue;
    auto *name = dyn_cast<NameExpr>(&value);
    std::optional<BuiltinName> activation =
        name ? builtinIn(BuiltinName::Table::Activation, name->name) : std::nullopt;
    if (constant.kind == LayerConstantKind::Activation && activation &&
        activation->activation == Activation::None)
      return identityBlock;
    auto shared = std::shared_ptr<const Expr>(verbatim.expr(value));
    return [shared](SourceRange) { return ASTCloner::exact().expr(*shared); };
  }

  /// A layer the instance is made of: a built-in layer's declaration, or
  /// (recursively) an instance of a layer definition.
  void expandInner(const Instance &instance, const LayerStmt &inner, const BoundArguments &bound,
                   ASTCloner &copy, std::vector<DeclPtr> &out) {
    std::string path = instance.path + "." + inner.name;
    ExprPtr constructor = copy.expr(*inner.constructor);
    if (const LayerDefDecl *definition = definitionCalled(*constructor)) {
      Instance nested{path, inner.nameRange, static_cast<const CallExpr *>(constructor.get()),
                      definition, bound.options};
      // The prelude's layers keep their own initialisers, as embedding does.
      if (prelude_.count(definition))
        nested.inherited.erase(Option::Init);
      instantiate(nested, out);
      return;
    }
    if (auto *call = dyn_cast<CallExpr>(constructor.get())) {
      // The constructor is copied already, and the options it inherits are
      // written where the enclosing instance is made: no more renaming.
      ASTCloner verbatim = ASTCloner::exact();
      std::vector<Argument> args;
      for (const Argument &a : call->args)
        args.push_back(verbatim.argument(a));
      for (const auto &[option, arg] : bound.options) {
        bool written = false;
        for (const Argument &a : call->args)
          written |= optionNamed(a.name) == option;
        if (option != Option::Init && !written)
          args.push_back(verbatim.argument(*arg));
      }
      constructor =
          std::make_unique<CallExpr>(call->range(), verbatim.expr(*call->callee), std::move(args));
    }
    out.push_back(
        std::make_unique<LayerDecl>(inner.range(), path, inner.nameRange, std::move(constructor)));
  }

  DiagnosticEngine &diag_;
  std::map<std::string, const LayerDefDecl *> definitions_;
  std::map<std::string, SourceRange> instanceNames_; ///< the top-level instances made so far
  std::set<const LayerDefDecl *> used_;
  std::set<const LayerDefDecl *>
      prelude_; ///< the prelude's definitions the program did not replace
  std::vector<const LayerDefDecl *> stack_;
  std::vector<std::string> failed_;
};

} // namespace

std::unique_ptr<Module> instantiateLayers(std::unique_ptr<Module> parsed,
                                          std::unique_ptr<Module> prelude, DiagnosticEngine &diag) {
  return Instantiator(diag).run(std::move(parsed), std::move(prelude));
}

DiagnosticContext instanceContext(DiagnosticEngine &diag, const FunctionDecl &fn) {
  if (!fn.instance)
    return {diag, fn.nameRange, ""};
  return {diag, fn.instance->made,
          "in '" + fn.name + "', an instance of layer '" + fn.instance->layer + "' made here"};
}

} // namespace foldc
