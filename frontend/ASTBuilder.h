// Turns ANTLR's parse tree into foldc's AST (internal to frontend/).
#pragma once

#include "FoldParser.h"
#include "frontend/AST.h"
#include "frontend/Diagnostics.h"

namespace foldc {

/// Builds AST nodes from a parse tree that parsed without errors. Each method
/// quotes the grammar rule it reads.
class ASTBuilder {
public:
  ASTBuilder(uint32_t file, std::string fileName, DiagnosticEngine &diag)
      : file_(file), fileName_(std::move(fileName)), diag_(diag) {}

  std::unique_ptr<Module> buildModule(FoldParser::ProgramContext *ctx);

private:
  DeclPtr buildDecl(FoldParser::DeclContext *ctx);
  std::unique_ptr<FunctionDecl> buildDef(SourceRange range, antlr4::tree::TerminalNode *id,
                                         FoldParser::ParamListContext *params,
                                         FoldParser::TypeContext *result,
                                         FoldParser::DefBodyContext *body);
  std::vector<LayerConstant> buildLayerConstants(FoldParser::LayerConstantsContext *ctx);
  ParamDecl buildParam(FoldParser::ParamDeclarationContext *ctx);
  std::vector<VariantDecl> buildDataBody(FoldParser::DataBodyContext *ctx, const std::string &name,
                                         bool &isRecord);
  std::vector<FieldDecl> buildFields(FoldParser::RecordFieldsContext *ctx);
  std::vector<Parameter> buildParams(FoldParser::ParamListContext *ctx);
  std::vector<StmtPtr> buildBlock(FoldParser::BlockContext *ctx);
  StmtPtr buildStmt(FoldParser::StmtContext *ctx);
  PatternPtr buildPattern(FoldParser::PatternContext *ctx);
  ExprPtr buildExpr(FoldParser::ExprContext *ctx);
  ExprPtr buildPrimary(FoldParser::PrimaryContext *ctx);
  ExprPtr buildIf(FoldParser::IfExpressionContext *ctx);
  std::vector<ExprPtr> buildExprs(const std::vector<FoldParser::ExprContext *> &ctxs);
  Argument buildArgument(FoldParser::ArgumentContext *ctx);
  MatchArm buildArm(FoldParser::MatchArmContext *ctx);
  TypeExprPtr buildType(FoldParser::TypeContext *ctx);
  TypeExprPtr buildPrimaryType(FoldParser::PrimaryTypeContext *ctx);

  SourceRange rangeOf(antlr4::ParserRuleContext *ctx) const;
  SourceRange rangeOf(antlr4::Token *token) const;
  SourceRange rangeOf(antlr4::tree::TerminalNode *node) const { return rangeOf(node->getSymbol()); }

  uint32_t file_;
  std::string fileName_;
  DiagnosticEngine &diag_; ///< only for literals out of range and constant kinds
};

} // namespace foldc
