// Out-of-line pieces of the AST.
#include "frontend/AST.h"

namespace foldc {

TensorTypeExpr::TensorTypeExpr(SourceRange r, ElementType e, std::vector<ExprPtr> d)
    : TypeExpr(Kind::Tensor, r), element(e), dims(std::move(d)) {}
TensorTypeExpr::~TensorTypeExpr() = default;

const char *spelling(BinaryOp op) {
  switch (op) {
  case BinaryOp::Add:
    return "+";
  case BinaryOp::Sub:
    return "-";
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::Div:
    return "/";
  case BinaryOp::MatMul:
    return "@";
  case BinaryOp::Eq:
    return "==";
  case BinaryOp::Ne:
    return "!=";
  case BinaryOp::Lt:
    return "<";
  case BinaryOp::Le:
    return "<=";
  case BinaryOp::Gt:
    return ">";
  case BinaryOp::Ge:
    return ">=";
  case BinaryOp::And:
    return "&&";
  case BinaryOp::Or:
    return "||";
  }
  return "?";
}

bool isComparison(BinaryOp op) {
  switch (op) {
  case BinaryOp::Eq:
  case BinaryOp::Ne:
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Gt:
  case BinaryOp::Ge:
    return true;
  case BinaryOp::Add:
  case BinaryOp::Sub:
  case BinaryOp::Mul:
  case BinaryOp::Div:
  case BinaryOp::MatMul:
  case BinaryOp::And:
  case BinaryOp::Or:
    return false;
  }
  return false;
}

bool isLogical(BinaryOp op) { return op == BinaryOp::And || op == BinaryOp::Or; }

const char *spelling(LayerConstantKind kind) {
  switch (kind) {
  case LayerConstantKind::Int:
    return "int";
  case LayerConstantKind::Float:
    return "float";
  case LayerConstantKind::Activation:
    return "activation";
  case LayerConstantKind::Initializer:
    return "init";
  }
  return "?";
}

} // namespace foldc
