// Reading imported C++ headers with libTooling. Clang types stop at this file.
#include "passes/sema/HeaderImport.h"

#include <clang/AST/ASTContext.h>
#include <clang/AST/Decl.h>
#include <clang/AST/DeclTemplate.h>
#include <clang/Frontend/ASTUnit.h>
#include <clang/Frontend/TextDiagnosticBuffer.h>
#include <clang/Tooling/Tooling.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

namespace foldc {

namespace {

namespace fs = std::filesystem;

/// The Fold type of a C++ type, or null (with `why` saying what failed).
TypeRef mapType(clang::QualType type, const clang::ASTContext &context, std::string &why) {
  clang::QualType bare = type.getNonReferenceType().getUnqualifiedType().getCanonicalType();
  if (const auto *builtin = bare->getAs<clang::BuiltinType>()) {
    if (builtin->getKind() == clang::BuiltinType::Bool)
      return types::boolType();
    if (builtin->isSignedInteger())
      return types::intType();
    if (builtin->getKind() == clang::BuiltinType::Double ||
        builtin->getKind() == clang::BuiltinType::Float)
      return types::floatType();
  }
  if (const auto *record = bare->getAsCXXRecordDecl()) {
    const auto *spec = llvm::dyn_cast<clang::ClassTemplateSpecializationDecl>(record);
    bool inStd = record->isInStdNamespace();
    if (spec && inStd && record->getName() == "basic_string" &&
        spec->getTemplateArgs()[0].getAsType()->isCharType())
      return types::stringType();
    if (spec && inStd && record->getName() == "vector") {
      TypeRef element = mapType(spec->getTemplateArgs()[0].getAsType(), context, why);
      return element ? types::list(element) : nullptr;
    }
  }
  why = "'" + type.getAsString(context.getPrintingPolicy()) + "' has no Fold type";
  return nullptr;
}

std::string readFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

class Importer {
public:
  Importer(SourceManager &sources, const std::vector<std::string> &includeDirs,
           DiagnosticEngine &diag, const std::string &foldFile)
      : sources_(sources), diag_(diag) {
    dirs_.push_back(fs::path(foldFile).parent_path());
    for (const std::string &d : includeDirs)
      dirs_.emplace_back(d);
  }

  void import(const ImportDecl &decl, std::vector<HostFunction> &out) {
    fs::path found;
    for (const fs::path &dir : dirs_)
      if (fs::exists(dir / decl.name)) {
        found = dir / decl.name;
        break;
      }
    if (found.empty()) {
      std::string searched;
      for (const fs::path &dir : dirs_)
        searched +=
            (searched.empty() ? "" : ", ") + (dir.empty() ? std::string(".") : dir.string());
      diag_.error(decl.nameRange) << "cannot find header \"" << decl.name << "\" (searched "
                                  << searched << "; add -I DIR)";
      return;
    }
    std::string code = readFile(found);
    uint32_t headerFile = sources_.addFile(found.string(), code);
    std::vector<std::string> args = {
        "-std=c++17", "-x", "c++", "-fsyntax-only", "-resource-dir", FOLDC_CLANG_RESOURCE_DIR,
        // "-I" alone would take the next argument as its folder
        "-I" + (found.has_parent_path() ? found.parent_path().string() : std::string("."))};
    clang::TextDiagnosticBuffer clangDiags;
    std::unique_ptr<clang::ASTUnit> unit = clang::tooling::buildASTFromCodeWithArgs(
        code, args, found.string(), "foldc", std::make_shared<clang::PCHContainerOperations>(),
        clang::tooling::getClangStripDependencyFileAdjuster(),
        clang::tooling::FileContentMappings(), &clangDiags);
    if (!unit || clangDiags.getNumErrors() > 0) {
      diag_.error(decl.nameRange) << "cannot parse header \"" << decl.name << "\": "
                                  << (clangDiags.getNumErrors() ? clangDiags.err_begin()->second
                                                                : std::string("no AST"));
      return;
    }
    collect(*unit, decl, found.string(), headerFile, out);
  }

private:
  void collect(clang::ASTUnit &unit, const ImportDecl &decl, const std::string &header,
               uint32_t headerFile, std::vector<HostFunction> &out) {
    clang::ASTContext &context = unit.getASTContext();
    const clang::SourceManager &sm = context.getSourceManager();
    std::vector<const clang::FunctionDecl *> functions;
    std::function<void(const clang::DeclContext *)> walk = [&](const clang::DeclContext *dc) {
      for (const clang::Decl *d : dc->decls()) {
        if (!sm.isInMainFile(d->getLocation()))
          continue;
        if (const auto *ns = llvm::dyn_cast<clang::NamespaceDecl>(d))
          walk(ns);
        else if (const auto *fn = llvm::dyn_cast<clang::FunctionDecl>(d);
                 fn && !llvm::isa<clang::CXXMethodDecl>(fn) && fn->getIdentifier())
          functions.push_back(fn);
      }
    };
    walk(context.getTranslationUnitDecl());
    for (const clang::FunctionDecl *fn : functions) {
      HostFunction host;
      host.name = fn->getNameAsString();
      host.qualifiedName = fn->getQualifiedNameAsString();
      host.header = header;
      host.import = &decl;
      clang::PresumedLoc at = sm.getPresumedLoc(fn->getLocation());
      SourceLocation begin{headerFile, at.getLine(), at.getColumn()};
      SourceLocation end = begin;
      end.column += uint32_t(host.name.size());
      host.declaration = SourceRange(begin, end);
      std::string why;
      bool ok = true;
      for (unsigned i = 0; ok && i < fn->getNumParams(); ++i) {
        TypeRef t = mapType(fn->getParamDecl(i)->getType(), context, why);
        if (!t)
          why = "parameter " + std::to_string(i + 1) + ": " + why;
        ok = t != nullptr;
        host.params.push_back(t);
      }
      if (ok) {
        host.result = mapType(fn->getReturnType(), context, why);
        if (!host.result)
          why = "result: " + why;
        ok = host.result != nullptr;
      }
      if (!ok) {
        diag_.error(decl.nameRange)
            << "cannot import '" << host.name << "' from \"" << decl.name << "\": " << why;
        diag_.note(host.declaration) << "'" << host.name << "' is declared here";
        continue;
      }
      out.push_back(std::move(host));
    }
  }

  SourceManager &sources_;
  DiagnosticEngine &diag_;
  std::vector<fs::path> dirs_;
};

} // namespace

std::vector<HostFunction> importHeaders(const Module &module, SourceManager &sources,
                                        const std::vector<std::string> &includeDirs,
                                        DiagnosticEngine &diag) {
  std::vector<HostFunction> functions;
  Importer importer(sources, includeDirs, diag, module.fileName);
  for (const DeclPtr &d : module.decls)
    if (auto *import = dyn_cast<ImportDecl>(d.get()))
      importer.import(*import, functions);
  return functions;
}

} // namespace foldc
