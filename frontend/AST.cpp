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
  }
  return "?";
}

} // namespace foldc
