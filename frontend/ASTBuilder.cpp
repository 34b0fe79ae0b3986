// Parse tree -> AST. Every method reads one grammar rule of grammar/Fold.g4.
#include "frontend/ASTBuilder.h"

#include <cassert>
#include <cerrno>
#include <cstdlib>

namespace foldc {

namespace {
using P = FoldParser;

std::string unescape(const std::string &quoted) {
  std::string out;
  for (size_t i = 1; i + 1 < quoted.size(); ++i) {
    char c = quoted[i];
    if (c == '\\' && i + 2 < quoted.size()) {
      char e = quoted[++i];
      out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
    } else {
      out += c;
    }
  }
  return out;
}

BinaryOp binaryOp(const std::string &text) {
  static const std::pair<const char *, BinaryOp> ops[] = {
      {"+", BinaryOp::Add},    {"-", BinaryOp::Sub}, {"*", BinaryOp::Mul}, {"/", BinaryOp::Div},
      {"@", BinaryOp::MatMul}, {"==", BinaryOp::Eq}, {"!=", BinaryOp::Ne}, {"<", BinaryOp::Lt},
      {"<=", BinaryOp::Le},    {">", BinaryOp::Gt},  {">=", BinaryOp::Ge}, {"&&", BinaryOp::And},
      {"||", BinaryOp::Or}};
  for (auto &[spelling, op] : ops)
    if (text == spelling)
      return op;
  assert(false && "operator not in the grammar");
  return BinaryOp::Add;
}

Selector selectorOf(antlr4::tree::TerminalNode *id, antlr4::tree::TerminalNode *index) {
  Selector s;
  if (id)
    s.field = id->getText();
  else
    s.index = static_cast<unsigned>(std::strtoul(index->getText().c_str(), nullptr, 10));
  return s;
}
} // namespace

SourceRange ASTBuilder::rangeOf(antlr4::Token *token) const {
  SourceLocation begin{file_, static_cast<uint32_t>(token->getLine()),
                       static_cast<uint32_t>(token->getCharPositionInLine() + 1)};
  SourceLocation end = begin;
  if (token->getStopIndex() >= token->getStartIndex())
    end.column += static_cast<uint32_t>(token->getStopIndex() - token->getStartIndex() + 1);
  return {begin, end};
}

SourceRange ASTBuilder::rangeOf(antlr4::ParserRuleContext *ctx) const {
  antlr4::Token *stop = ctx->getStop() ? ctx->getStop() : ctx->getStart();
  return {rangeOf(ctx->getStart()).begin, rangeOf(stop).end};
}

// program : decl* EOF ;
std::unique_ptr<Module> ASTBuilder::buildModule(P::ProgramContext *ctx) {
  auto module = std::make_unique<Module>();
  module->fileName = fileName_;
  for (auto *decl : ctx->decl())
    module->decls.push_back(buildDecl(decl));
  return module;
}

// decl : 'import' STRING ';' | 'const' ID '=' expr ';' | 'data' ID '=' dataBody ';'
//      | paramDeclaration | 'layer' ID '=' expr ';'
//      | 'layer' ID '(' layerConstants? ')' '(' paramList? ')' ('->' type)? defBody
//      | 'def' ID '(' paramList? ')' ('->' type)? defBody | 'model' ID '(' paramList? ')' block
DeclPtr ASTBuilder::buildDecl(P::DeclContext *ctx) {
  SourceRange range = rangeOf(ctx);
  if (auto *c = dynamic_cast<P::ImportDeclContext *>(ctx))
    return std::make_unique<ImportDecl>(DeclKind::Import, range, unescape(c->STRING()->getText()),
                                        rangeOf(c->STRING()));
  if (auto *c = dynamic_cast<P::ConstDeclContext *>(ctx))
    return std::make_unique<ConstDecl>(range, c->ID()->getText(), rangeOf(c->ID()),
                                       buildExpr(c->expr()));
  if (auto *c = dynamic_cast<P::DataDeclContext *>(ctx)) {
    bool isRecord = false;
    auto variants = buildDataBody(c->dataBody(), c->ID()->getText(), isRecord);
    return std::make_unique<DataDecl>(range, c->ID()->getText(), rangeOf(c->ID()), isRecord,
                                      std::move(variants));
  }
  if (auto *c = dynamic_cast<P::ParamDeclContext *>(ctx))
    return std::make_unique<GlobalParamDecl>(buildParam(c->paramDeclaration()));
  if (auto *c = dynamic_cast<P::LayerDeclContext *>(ctx))
    return std::make_unique<LayerDecl>(range, c->ID()->getText(), rangeOf(c->ID()),
                                       buildExpr(c->expr()));
  if (auto *c = dynamic_cast<P::DefDeclContext *>(ctx))
    return buildDef(range, c->ID(), c->paramList(), c->type(), c->defBody());
  if (auto *c = dynamic_cast<P::LayerDefDeclContext *>(ctx))
    return std::make_unique<LayerDefDecl>(
        range, c->ID()->getText(), rangeOf(c->ID()), buildLayerConstants(c->layerConstants()),
        buildDef(range, c->ID(), c->paramList(), c->type(), c->defBody()));
  auto *c = dynamic_cast<P::ModelDeclContext *>(ctx);
  assert(c && "unhandled declaration alternative");
  return std::make_unique<FunctionDecl>(DeclKind::Model, range, c->ID()->getText(),
                                        rangeOf(c->ID()), buildParams(c->paramList()), nullptr,
                                        buildBlock(c->block()), nullptr);
}

// 'def' ID '(' paramList? ')' ('->' type)? defBody, and the same parts of a
// layer definition.
std::unique_ptr<FunctionDecl>
ASTBuilder::buildDef(SourceRange range, antlr4::tree::TerminalNode *id, P::ParamListContext *params,
                     P::TypeContext *result, P::DefBodyContext *body) {
  std::vector<StmtPtr> stmts;
  ExprPtr exprBody;
  if (body->block())
    stmts = buildBlock(body->block());
  else
    exprBody = buildExpr(body->expr());
  return std::make_unique<FunctionDecl>(DeclKind::Def, range, id->getText(), rangeOf(id),
                                        buildParams(params), result ? buildType(result) : nullptr,
                                        std::move(stmts), std::move(exprBody));
}

// layerConstants : layerConstant (',' layerConstant)* ','? ;
// layerConstant  : ID ':' kind=('int' | 'float' | ID) ('=' expr)? ;
std::vector<LayerConstant> ASTBuilder::buildLayerConstants(P::LayerConstantsContext *ctx) {
  std::vector<LayerConstant> constants;
  if (!ctx)
    return constants;
  for (auto *c : ctx->layerConstant()) {
    std::string kind = c->kind->getText();
    LayerConstant constant{rangeOf(c), rangeOf(c->ID(0)), c->ID(0)->getText(),
                           LayerConstantKind::Int, c->expr() ? buildExpr(c->expr()) : nullptr};
    if (kind == "float")
      constant.kind = LayerConstantKind::Float;
    else if (kind == "activation")
      constant.kind = LayerConstantKind::Activation;
    else if (kind == "init")
      constant.kind = LayerConstantKind::Initializer;
    else if (kind != "int")
      diag_.error(rangeOf(c->kind))
          << "a layer constant is an int, a float, an activation or an init, found '" << kind
          << "'";
    constants.push_back(std::move(constant));
  }
  return constants;
}

// paramDeclaration : 'param' ID ':' type ('=' expr)? ';' ;
ParamDecl ASTBuilder::buildParam(P::ParamDeclarationContext *ctx) {
  ParamDecl param;
  param.range = rangeOf(ctx);
  param.nameRange = rangeOf(ctx->ID());
  param.name = ctx->ID()->getText();
  param.type = buildType(ctx->type());
  if (ctx->expr())
    param.init = buildExpr(ctx->expr());
  return param;
}

// dataBody : recordFields | variant ('|' variant)* ;   variant : ID recordFields? ;
std::vector<VariantDecl> ASTBuilder::buildDataBody(P::DataBodyContext *ctx, const std::string &name,
                                                   bool &isRecord) {
  std::vector<VariantDecl> variants;
  isRecord = ctx->recordFields() != nullptr;
  if (isRecord) {
    variants.push_back({rangeOf(ctx), name, buildFields(ctx->recordFields())});
    return variants;
  }
  for (auto *v : ctx->variant()) {
    std::vector<FieldDecl> fields;
    if (v->recordFields())
      fields = buildFields(v->recordFields());
    variants.push_back({rangeOf(v), v->ID()->getText(), std::move(fields)});
  }
  return variants;
}

// recordFields : '{' (field (',' field)* ','?)? '}' ;   field : ID ':' type ;
std::vector<FieldDecl> ASTBuilder::buildFields(P::RecordFieldsContext *ctx) {
  std::vector<FieldDecl> fields;
  for (auto *f : ctx->field())
    fields.push_back({rangeOf(f), f->ID()->getText(), buildType(f->type())});
  return fields;
}

// paramList : parameter (',' parameter)* ','? ;   parameter : ID ':' type ;
std::vector<Parameter> ASTBuilder::buildParams(P::ParamListContext *ctx) {
  std::vector<Parameter> params;
  if (!ctx)
    return params;
  for (auto *p : ctx->parameter())
    params.push_back({rangeOf(p), p->ID()->getText(), buildType(p->type())});
  return params;
}

// block : '{' stmt* '}' ;
std::vector<StmtPtr> ASTBuilder::buildBlock(P::BlockContext *ctx) {
  std::vector<StmtPtr> stmts;
  for (auto *s : ctx->stmt())
    stmts.push_back(buildStmt(s));
  return stmts;
}

// stmt : 'let' pattern '=' expr ';' | 'return' expr ';' | 'loss' expr ';'
//      | 'metric' ID '=' expr ';' | 'output' expr ';' | paramDeclaration
//      | 'layer' ID '=' expr ';'
StmtPtr ASTBuilder::buildStmt(P::StmtContext *ctx) {
  SourceRange range = rangeOf(ctx);
  if (auto *c = dynamic_cast<P::LetStmtContext *>(ctx))
    return std::make_unique<LetStmt>(range, buildPattern(c->pattern()), buildExpr(c->expr()));
  if (auto *c = dynamic_cast<P::ReturnStmtContext *>(ctx))
    return std::make_unique<ValueStmt>(StmtKind::Return, range, buildExpr(c->expr()));
  if (auto *c = dynamic_cast<P::LossStmtContext *>(ctx))
    return std::make_unique<ValueStmt>(StmtKind::Loss, range, buildExpr(c->expr()));
  if (auto *c = dynamic_cast<P::OutputStmtContext *>(ctx))
    return std::make_unique<ValueStmt>(StmtKind::Output, range, buildExpr(c->expr()));
  if (auto *c = dynamic_cast<P::MetricStmtContext *>(ctx))
    return std::make_unique<MetricStmt>(range, c->ID()->getText(), rangeOf(c->ID()),
                                        buildExpr(c->expr()));
  if (auto *c = dynamic_cast<P::LayerStmtContext *>(ctx))
    return std::make_unique<LayerStmt>(range, c->ID()->getText(), rangeOf(c->ID()),
                                       buildExpr(c->expr()));
  auto *c = dynamic_cast<P::ParamStmtContext *>(ctx);
  assert(c && "unhandled statement alternative");
  return std::make_unique<ParamStmt>(range, buildParam(c->paramDeclaration()));
}

// pattern : ID | '_' | '(' pattern (',' pattern)+ ','? ')' ;
PatternPtr ASTBuilder::buildPattern(P::PatternContext *ctx) {
  SourceRange range = rangeOf(ctx);
  if (auto *c = dynamic_cast<P::NamePatternContext *>(ctx))
    return std::make_unique<NamePattern>(range, c->ID()->getText());
  if (dynamic_cast<P::WildcardPatternContext *>(ctx))
    return std::make_unique<WildcardPattern>(range);
  auto *c = dynamic_cast<P::TuplePatternContext *>(ctx);
  assert(c && "unhandled pattern alternative");
  std::vector<PatternPtr> elements;
  for (auto *p : c->pattern())
    elements.push_back(buildPattern(p));
  return std::make_unique<TuplePattern>(range, std::move(elements));
}

std::vector<ExprPtr> ASTBuilder::buildExprs(const std::vector<P::ExprContext *> &ctxs) {
  std::vector<ExprPtr> exprs;
  for (auto *e : ctxs)
    exprs.push_back(buildExpr(e));
  return exprs;
}

// expr : primary | expr '.' (ID | INT) | expr '.' FLOAT | expr '(' argList? ')'
//      | expr '[' expr? ':' expr? ']' | expr '[' expr ']' | '-' expr
//      | expr ('*'|'/'|'@') expr | expr ('+'|'-') expr | expr (comparison) expr
//      | expr '>>' expr | '|' pattern (',' pattern)* '|' expr
ExprPtr ASTBuilder::buildExpr(P::ExprContext *ctx) {
  SourceRange range = rangeOf(ctx);
  if (auto *c = dynamic_cast<P::PrimaryExprContext *>(ctx))
    return buildPrimary(c->primary());
  if (auto *c = dynamic_cast<P::MemberExprContext *>(ctx))
    return std::make_unique<MemberExpr>(range, buildExpr(c->expr()), selectorOf(c->ID(), c->INT()));
  if (auto *c = dynamic_cast<P::DoubleIndexExprContext *>(ctx)) {
    // `t.0.1` lexes as `t` `.` `0.1`: two tuple indexes in one FLOAT token.
    std::string text = c->FLOAT()->getText();
    size_t dot = text.find('.');
    Selector first, second;
    first.index = static_cast<unsigned>(std::stoul(text.substr(0, dot)));
    second.index = static_cast<unsigned>(std::stoul(text.substr(dot + 1)));
    SourceRange inner = range;
    inner.end.column -= static_cast<uint32_t>(text.size() - dot);
    auto base = std::make_unique<MemberExpr>(inner, buildExpr(c->expr()), first);
    return std::make_unique<MemberExpr>(range, std::move(base), second);
  }
  if (auto *c = dynamic_cast<P::CallExprContext *>(ctx)) {
    std::vector<Argument> args;
    if (c->argList())
      for (auto *a : c->argList()->argument())
        args.push_back(buildArgument(a));
    return std::make_unique<CallExpr>(range, buildExpr(c->expr()), std::move(args));
  }
  if (auto *c = dynamic_cast<P::SubscriptsExprContext *>(ctx)) {
    std::vector<Subscript> subscripts;
    for (auto *s : c->subscript()) {
      Subscript sub;
      sub.range = rangeOf(s);
      if (auto *r = dynamic_cast<P::RangeSubscriptContext *>(s)) {
        sub.lo = r->lo ? buildExpr(r->lo) : nullptr;
        sub.hi = r->hi ? buildExpr(r->hi) : nullptr;
      } else {
        sub.index = buildExpr(static_cast<P::IndexSubscriptContext *>(s)->expr());
      }
      subscripts.push_back(std::move(sub));
    }
    return std::make_unique<SubscriptsExpr>(range, buildExpr(c->expr()), std::move(subscripts));
  }
  if (auto *c = dynamic_cast<P::SliceExprContext *>(ctx))
    return std::make_unique<SliceExpr>(range, buildExpr(c->expr(0)),
                                       c->lo ? buildExpr(c->lo) : nullptr,
                                       c->hi ? buildExpr(c->hi) : nullptr);
  if (auto *c = dynamic_cast<P::IndexExprContext *>(ctx))
    return std::make_unique<IndexExpr>(range, buildExpr(c->expr(0)), buildExpr(c->expr(1)));
  if (auto *c = dynamic_cast<P::NegExprContext *>(ctx))
    return std::make_unique<NegExpr>(range, buildExpr(c->expr()));
  if (auto *c = dynamic_cast<P::NotExprContext *>(ctx))
    return std::make_unique<NotExpr>(range, buildExpr(c->expr()));
  if (auto *c = dynamic_cast<P::MulExprContext *>(ctx))
    return std::make_unique<BinaryExpr>(range, binaryOp(c->op->getText()), buildExpr(c->expr(0)),
                                        buildExpr(c->expr(1)));
  if (auto *c = dynamic_cast<P::AddExprContext *>(ctx))
    return std::make_unique<BinaryExpr>(range, binaryOp(c->op->getText()), buildExpr(c->expr(0)),
                                        buildExpr(c->expr(1)));
  if (auto *c = dynamic_cast<P::CompareExprContext *>(ctx))
    return std::make_unique<BinaryExpr>(range, binaryOp(c->op->getText()), buildExpr(c->expr(0)),
                                        buildExpr(c->expr(1)));
  if (auto *c = dynamic_cast<P::AndExprContext *>(ctx))
    return std::make_unique<BinaryExpr>(range, BinaryOp::And, buildExpr(c->expr(0)),
                                        buildExpr(c->expr(1)));
  if (auto *c = dynamic_cast<P::OrExprContext *>(ctx))
    return std::make_unique<BinaryExpr>(range, BinaryOp::Or, buildExpr(c->expr(0)),
                                        buildExpr(c->expr(1)));
  if (auto *c = dynamic_cast<P::PipeExprContext *>(ctx))
    return std::make_unique<PipeExpr>(range, buildExpr(c->expr(0)), buildExpr(c->expr(1)));
  auto *c = dynamic_cast<P::LambdaExprContext *>(ctx);
  assert(c && "unhandled expression alternative");
  std::vector<PatternPtr> params;
  for (auto *p : c->pattern())
    params.push_back(buildPattern(p));
  return std::make_unique<LambdaExpr>(range, std::move(params), buildExpr(c->expr()));
}

// primary : INT | FLOAT | STRING | 'true' | 'false' | ID | '.' (ID | INT) | '(' expr ')'
//         | '(' expr ',' ... ')' | '[' ... ']' | 'match' expr '{' matchArm ... '}' | ifExpression
ExprPtr ASTBuilder::buildPrimary(P::PrimaryContext *ctx) {
  SourceRange range = rangeOf(ctx);
  if (dynamic_cast<P::IntLitContext *>(ctx)) {
    errno = 0;
    long long value = std::strtoll(ctx->getText().c_str(), nullptr, 10);
    if (errno == ERANGE)
      diag_.error(range) << "integer literal '" << ctx->getText() << "' is too large";
    return std::make_unique<IntLitExpr>(range, value);
  }
  if (dynamic_cast<P::FloatLitContext *>(ctx))
    return std::make_unique<FloatLitExpr>(range, std::strtod(ctx->getText().c_str(), nullptr),
                                          ctx->getText());
  if (dynamic_cast<P::StringLitContext *>(ctx))
    return std::make_unique<StringLitExpr>(range, unescape(ctx->getText()));
  if (dynamic_cast<P::BoolLitContext *>(ctx))
    return std::make_unique<BoolLitExpr>(range, ctx->getText() == "true");
  if (auto *c = dynamic_cast<P::NameRefContext *>(ctx))
    return std::make_unique<NameExpr>(range, c->ID()->getText());
  if (auto *c = dynamic_cast<P::AccessorBlockContext *>(ctx))
    return std::make_unique<AccessorExpr>(range, selectorOf(c->ID(), c->INT()));
  if (auto *c = dynamic_cast<P::ParenExprContext *>(ctx))
    return buildExpr(c->expr());
  if (auto *c = dynamic_cast<P::TupleExprContext *>(ctx))
    return std::make_unique<TupleExpr>(range, buildExprs(c->expr()));
  if (auto *c = dynamic_cast<P::ListExprContext *>(ctx))
    return std::make_unique<ListExpr>(range, buildExprs(c->expr()));
  if (auto *c = dynamic_cast<P::MatchExprContext *>(ctx)) {
    std::vector<MatchArm> arms;
    for (auto *arm : c->matchArm())
      arms.push_back(buildArm(arm));
    return std::make_unique<MatchExpr>(range, buildExpr(c->expr()), std::move(arms));
  }
  auto *c = dynamic_cast<P::IfExprContext *>(ctx);
  assert(c && "unhandled primary alternative");
  return buildIf(c->ifExpression());
}

// ifExpression : 'if' expr '{' expr '}' 'else' (ifExpression | '{' expr '}') ;
ExprPtr ASTBuilder::buildIf(P::IfExpressionContext *ctx) {
  ExprPtr elseExpr = ctx->ifExpression() ? buildIf(ctx->ifExpression()) : buildExpr(ctx->expr(2));
  return std::make_unique<IfExpr>(rangeOf(ctx), buildExpr(ctx->expr(0)), buildExpr(ctx->expr(1)),
                                  std::move(elseExpr));
}

// matchArm : armPattern '=>' expr ;   armPattern : ID (ID | '_')? | '_' ;
MatchArm ASTBuilder::buildArm(P::MatchArmContext *ctx) {
  MatchArm arm;
  arm.range = rangeOf(ctx);
  arm.patternRange = rangeOf(ctx->armPattern());
  if (auto *v = dynamic_cast<P::VariantArmContext *>(ctx->armPattern())) {
    arm.ctor = v->ctor->getText();
    if (v->binder && v->binder->getText() != "_")
      arm.binder = v->binder->getText();
  }
  arm.body = buildExpr(ctx->expr());
  return arm;
}

// argument : ID ':' expr | expr '->' expr | expr ;
Argument ASTBuilder::buildArgument(P::ArgumentContext *ctx) {
  Argument arg;
  arg.range = rangeOf(ctx);
  if (auto *c = dynamic_cast<P::NamedArgContext *>(ctx)) {
    arg.name = c->name->getText();
    arg.value = buildExpr(c->expr());
  } else if (auto *c = dynamic_cast<P::ArrowArgContext *>(ctx)) {
    arg.value = std::make_unique<ArrowExpr>(arg.range, buildExpr(c->from), buildExpr(c->to));
  } else {
    arg.value = buildExpr(dynamic_cast<P::PositionalArgContext *>(ctx)->expr());
  }
  return arg;
}

// type : primaryType | type '?' | type '->' type ;
TypeExprPtr ASTBuilder::buildType(P::TypeContext *ctx) {
  SourceRange range = rangeOf(ctx);
  if (auto *c = dynamic_cast<P::SimpleTypeContext *>(ctx))
    return buildPrimaryType(c->primaryType());
  if (auto *c = dynamic_cast<P::OptionalTypeContext *>(ctx))
    return std::make_unique<OptionalTypeExpr>(range, buildType(c->type()));
  auto *c = dynamic_cast<P::BlockTypeContext *>(ctx);
  assert(c && "unhandled type alternative");
  return std::make_unique<BlockTypeExpr>(range, buildType(c->type(0)), buildType(c->type(1)));
}

// primaryType : ('int'|'float'|'bool'|'string') | ('f32'|'i32') ('[' expr (',' expr)* ']')?
//             | '(' type ')' | '(' type (',' type)+ ')' | '[' type ']' | recordFields | ID
TypeExprPtr ASTBuilder::buildPrimaryType(P::PrimaryTypeContext *ctx) {
  SourceRange range = rangeOf(ctx);
  if (auto *c = dynamic_cast<P::HostScalarTypeContext *>(ctx)) {
    std::string n = c->name->getText();
    HostScalar scalar = n == "int"     ? HostScalar::Int
                        : n == "float" ? HostScalar::Float
                        : n == "bool"  ? HostScalar::Bool
                                       : HostScalar::String;
    return std::make_unique<HostScalarTypeExpr>(range, scalar);
  }
  if (auto *c = dynamic_cast<P::TensorTypeContext *>(ctx))
    return std::make_unique<TensorTypeExpr>(
        range, c->elem->getText() == "f32" ? ElementType::F32 : ElementType::I32,
        buildExprs(c->expr()));
  if (auto *c = dynamic_cast<P::ParenTypeContext *>(ctx))
    return buildType(c->type());
  if (auto *c = dynamic_cast<P::TupleTypeContext *>(ctx)) {
    std::vector<TypeExprPtr> elements;
    for (auto *t : c->type())
      elements.push_back(buildType(t));
    return std::make_unique<TupleTypeExpr>(range, std::move(elements));
  }
  if (auto *c = dynamic_cast<P::ListTypeContext *>(ctx))
    return std::make_unique<ListTypeExpr>(range, buildType(c->type()));
  if (auto *c = dynamic_cast<P::RecordTypeContext *>(ctx))
    return std::make_unique<RecordTypeExpr>(range, buildFields(c->recordFields()));
  auto *c = dynamic_cast<P::NamedTypeContext *>(ctx);
  assert(c && "unhandled primary type alternative");
  return std::make_unique<NamedTypeExpr>(range, c->ID()->getText());
}

} // namespace foldc
