// Semantic types: what the type checker infers and later passes read.
#pragma once

#include "frontend/ElementType.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace foldc {

struct Type;
struct DataDecl; // an AST node: to codegen, only an identity (see BatchPlan::dataTypes)
/// Types are immutable and shared; compare them with `sameType`, not `==`.
using TypeRef = std::shared_ptr<const Type>;

enum class TypeKind {
  Int,
  Float,
  Bool,
  String, ///< host scalars
  Tensor, ///< f32 / i32 with a static shape
  Tuple,
  List,
  Optional,
  Data,  ///< a `data` declaration, or one variant of a union
  Block, ///< something callable: def, layer, builtin, lambda...
  Error  ///< the type of an expression already reported as wrong
};

struct BlockValue; // how to apply a block (TypeCheck's business)

struct Type {
  TypeKind kind;
  ElementType element = ElementType::F32; ///< Tensor
  std::vector<int64_t> shape;             ///< Tensor; empty for a scalar
  std::vector<TypeRef> elements;          ///< Tuple elements; List/Optional: [element]
  const DataDecl *data = nullptr;         ///< Data
  int variant = -1;                       ///< Data: the variant, or -1 for the whole union
  /// Block: a known signature (params -> result) when there is one. Lambdas and
  /// partially applied combinators have none: they are typed where applied.
  bool hasSignature = false;
  std::vector<TypeRef> params;
  TypeRef result;
  std::shared_ptr<const BlockValue> block;

  bool isHost() const;
  bool isTensor() const { return kind == TypeKind::Tensor; }
  bool isScalarTensor() const { return kind == TypeKind::Tensor && shape.empty(); }
  bool isError() const { return kind == TypeKind::Error; }
  bool isHostNumber() const { return kind == TypeKind::Int || kind == TypeKind::Float; }
  const TypeRef &element0() const { return elements.front(); }
};

namespace types {
TypeRef intType();
TypeRef floatType();
TypeRef boolType();
TypeRef stringType();
TypeRef errorType();
TypeRef tensor(ElementType element, std::vector<int64_t> shape);
TypeRef f32(std::vector<int64_t> shape = {});
TypeRef i32(std::vector<int64_t> shape = {});
TypeRef tuple(std::vector<TypeRef> elements);
TypeRef list(TypeRef element);
TypeRef optional(TypeRef element);
TypeRef data(const DataDecl *decl, int variant = -1);
TypeRef block(std::vector<TypeRef> params, TypeRef result);
TypeRef opaqueBlock(std::shared_ptr<const BlockValue> value);
} // namespace types

/// Structural equality (a variant of a union is not the union).
bool sameType(const TypeRef &a, const TypeRef &b);
/// What a condition may be: a host bool, or a computed scalar (f32 or i32),
/// which unfolding reads (waiting for it to be computed) and tests for != 0.
bool isCondition(const TypeRef &t);
/// The language's own syntax: `f32[150]`, `(Tree) -> f32[5]`, `[int]`, `Tree.Leaf`.
std::string toString(const TypeRef &type);
/// True when `type` contains a tensor anywhere (tuples, lists, optionals).
bool containsTensor(const TypeRef &type);

} // namespace foldc
