// Construction, comparison and printing of semantic types.
#include "passes/sema/Type.h"

#include "frontend/AST.h"
#include "frontend/Diagnostics.h"

namespace foldc {

bool Type::isHost() const {
  switch (kind) {
  case TypeKind::Int:
  case TypeKind::Float:
  case TypeKind::Bool:
  case TypeKind::String:
  case TypeKind::Data:
    return true;
  case TypeKind::List:
  case TypeKind::Optional:
  case TypeKind::Tuple:
    for (const TypeRef &e : elements)
      if (!e->isHost())
        return false;
    return true;
  case TypeKind::Tensor:
  case TypeKind::Block:
  case TypeKind::Error:
    return false;
  }
  return false;
}

namespace types {
namespace {
TypeRef make(Type t) { return std::make_shared<const Type>(std::move(t)); }
TypeRef simple(TypeKind kind) {
  Type t;
  t.kind = kind;
  return make(std::move(t));
}
} // namespace

TypeRef intType() {
  static TypeRef t = simple(TypeKind::Int);
  return t;
}
TypeRef floatType() {
  static TypeRef t = simple(TypeKind::Float);
  return t;
}
TypeRef boolType() {
  static TypeRef t = simple(TypeKind::Bool);
  return t;
}
TypeRef stringType() {
  static TypeRef t = simple(TypeKind::String);
  return t;
}
TypeRef errorType() {
  static TypeRef t = simple(TypeKind::Error);
  return t;
}

TypeRef tensor(ElementType element, std::vector<int64_t> shape) {
  Type t;
  t.kind = TypeKind::Tensor;
  t.element = element;
  t.shape = std::move(shape);
  return make(std::move(t));
}
TypeRef f32(std::vector<int64_t> shape) { return tensor(ElementType::F32, std::move(shape)); }
TypeRef i32(std::vector<int64_t> shape) { return tensor(ElementType::I32, std::move(shape)); }

TypeRef tuple(std::vector<TypeRef> elements) {
  Type t;
  t.kind = TypeKind::Tuple;
  t.elements = std::move(elements);
  return make(std::move(t));
}
TypeRef list(TypeRef element) {
  Type t;
  t.kind = TypeKind::List;
  t.elements = {std::move(element)};
  return make(std::move(t));
}
TypeRef optional(TypeRef element) {
  Type t;
  t.kind = TypeKind::Optional;
  t.elements = {std::move(element)};
  return make(std::move(t));
}
TypeRef data(const DataDecl *decl, int variant) {
  Type t;
  t.kind = TypeKind::Data;
  t.data = decl;
  t.variant = decl->isRecord ? 0 : variant;
  return make(std::move(t));
}
TypeRef block(std::vector<TypeRef> params, TypeRef result) {
  Type t;
  t.kind = TypeKind::Block;
  t.hasSignature = true;
  t.params = std::move(params);
  t.result = std::move(result);
  return make(std::move(t));
}
TypeRef opaqueBlock(std::shared_ptr<const BlockValue> value) {
  Type t;
  t.kind = TypeKind::Block;
  t.block = std::move(value);
  return make(std::move(t));
}
} // namespace types

static bool sameTypes(const std::vector<TypeRef> &a, const std::vector<TypeRef> &b) {
  if (a.size() != b.size())
    return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!sameType(a[i], b[i]))
      return false;
  return true;
}

bool isCondition(const TypeRef &t) { return t->kind == TypeKind::Bool || t->isScalarTensor(); }

bool sameType(const TypeRef &a, const TypeRef &b) {
  if (a == b)
    return true;
  if (a->kind != b->kind)
    return false;
  switch (a->kind) {
  case TypeKind::Tensor:
    return a->element == b->element && a->shape == b->shape;
  case TypeKind::Tuple:
  case TypeKind::List:
  case TypeKind::Optional:
    return sameTypes(a->elements, b->elements);
  case TypeKind::Data:
    return a->data == b->data && a->variant == b->variant;
  case TypeKind::Block:
    return a->hasSignature && b->hasSignature && sameTypes(a->params, b->params) &&
           sameType(a->result, b->result);
  case TypeKind::Int:
  case TypeKind::Float:
  case TypeKind::Bool:
  case TypeKind::String:
  case TypeKind::Error:
    return true;
  }
  return true;
}

static std::string joinTypes(const std::vector<TypeRef> &types) {
  std::string out;
  for (size_t i = 0; i < types.size(); ++i)
    out += (i ? ", " : "") + toString(types[i]);
  return out;
}

std::string toString(const TypeRef &type) {
  switch (type->kind) {
  case TypeKind::Int:
    return "int";
  case TypeKind::Float:
    return "float";
  case TypeKind::Bool:
    return "bool";
  case TypeKind::String:
    return "string";
  case TypeKind::Error:
    return std::string(kErrorTypeSpelling);
  case TypeKind::Tensor: {
    std::string out = type->element == ElementType::F32 ? "f32" : "i32";
    if (type->shape.empty())
      return out;
    out += "[";
    for (size_t i = 0; i < type->shape.size(); ++i)
      out += (i ? ", " : "") + std::to_string(type->shape[i]);
    return out + "]";
  }
  case TypeKind::Tuple:
    return "(" + joinTypes(type->elements) + ")";
  case TypeKind::List:
    return "[" + toString(type->element0()) + "]";
  case TypeKind::Optional: {
    bool wrap = type->element0()->kind == TypeKind::Block;
    std::string inner = toString(type->element0());
    return (wrap ? "(" + inner + ")" : inner) + "?";
  }
  case TypeKind::Data:
    if (type->data->isRecord || type->variant < 0)
      return type->data->name;
    return type->data->name + "." + type->data->variants[type->variant].name;
  case TypeKind::Block:
    if (!type->hasSignature)
      return "block";
    return "(" + joinTypes(type->params) + ") -> " + toString(type->result);
  }
  return "?";
}

bool containsTensor(const TypeRef &type) {
  if (type->kind == TypeKind::Tensor)
    return true;
  for (const TypeRef &e : type->elements)
    if (containsTensor(e))
      return true;
  return false;
}

} // namespace foldc
