// Printing a typed program in the language's own type syntax.
#include "passes/sema/TypesPrinter.h"

#include "frontend/ASTPrinter.h"
#include "passes/builtins/Builtins.h"

namespace foldc {

namespace {

void printParam(const TypedProgram &program, const ParamDecl &param, const std::string &prefix,
                std::ostream &out) {
  auto it = program.params.find(&param);
  if (it == program.params.end())
    return;
  const ParamInfo &info = it->second;
  out << "param " << prefix << param.name << ": " << toString(info.type) << " = "
      << initKindInfo(info.init.kind).name;
  if (initKindInfo(info.init.kind).arity == 2)
    out << '(' << info.init.args[0] << ", " << info.init.args[1] << ')';
  else if (initKindInfo(info.init.kind).arity == 1)
    out << '(' << info.init.args[0] << ')';
  out << '\n';
}

void printTraining(const TrainingOptions &training, std::ostream &out) {
  if (!training.trainable)
    out << " trainable: false";
  if (training.learningRateScale != 1)
    out << " lr_scale: " << training.learningRateScale;
}

std::string signatureText(const TypeRef &signature) {
  std::string params;
  for (size_t i = 0; i < signature->params.size(); ++i)
    params += (i ? ", " : "") + toString(signature->params[i]);
  return "(" + params + ") -> " + toString(signature->result);
}

void printLayer(const std::string &name, const LayerInfo &layer, std::ostream &out) {
  out << "layer " << name << ": " << signatureText(layer.blockType);
  printTraining(layer.training, out);
  out << '\n';
}

} // namespace

void printTypes(const TypedProgram &program, std::ostream &out) {
  for (const HostFunction &f : program.hostFunctions)
    out << "import \"" << f.import->name << "\": " << f.name << ": "
        << signatureText(types::block(f.params, f.result)) << '\n';
  for (const DeclPtr &decl : program.module->decls) {
    if (auto *c = dyn_cast<ConstDecl>(decl.get())) {
      auto it = program.consts->values().find(c);
      if (it != program.consts->values().end())
        out << "const " << c->name << ": " << (it->second.isInt ? "int" : "float") << " = "
            << it->second.toString() << '\n';
    } else if (auto *p = dyn_cast<GlobalParamDecl>(decl.get())) {
      printParam(program, p->param, "", out);
    } else if (auto *l = dyn_cast<LayerDecl>(decl.get())) {
      auto it = program.layers.find(l);
      if (it != program.layers.end())
        printLayer(l->name, it->second, out);
    } else if (auto *fn = dyn_cast<FunctionDecl>(decl.get())) {
      auto it = program.signatures.find(fn);
      if (it == program.signatures.end())
        continue;
      if (fn->isModel()) {
        std::string params;
        for (size_t i = 0; i < it->second->params.size(); ++i)
          params += (i ? ", " : "") + toString(it->second->params[i]);
        out << "model " << fn->name << ": (" << params << ")\n";
      } else if (fn->instance) {
        out << "instance " << fn->name << " of " << fn->instance->layer << ": "
            << signatureText(it->second);
        printTraining(program.instances.at(fn), out);
        out << '\n';
      } else {
        out << "def " << fn->name << ": " << signatureText(it->second) << '\n';
      }
      // An instance's params are named by its path, as in the params file;
      // the locals of a prelude layer's body are not the user's.
      std::string paramPrefix = fn->instance ? fn->name + "." : "";
      bool showLocals = !fn->instance || !fn->instance->prelude;
      for (const StmtPtr &s : fn->body) {
        if (auto *let = dyn_cast<LetStmt>(s.get()); let && showLocals)
          out << "  let " << toSource(*let->pattern) << ": "
              << toString(program.typeOf(*let->value)) << '\n';
        else if (auto *ps = dyn_cast<ParamStmt>(s.get()))
          printParam(program, ps->param, paramPrefix, out << "  ");
      }
    }
  }
}

} // namespace foldc
