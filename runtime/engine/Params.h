// Parameters: named tensors with gradients, initialisers reproducible from a seed.
#pragma once

#include "runtime/support/BulkVector.h"

#include <algorithm>
#include <cstdint>
#include <new>
#include <span>
#include <string>
#include <vector>

namespace foldc::rt {

enum class InitKind { Zeros, Ones, Uniform, Normal, Glorot, Constant };

/// An initialiser: uniform(a, b), normal(std = a), constant(a); glorot is
/// uniform(-l, l) with l = sqrt(6 / (fan_in + fan_out)), fan_in the product of
/// all dims but the last, fan_out the last.
struct InitSpec {
  InitKind kind = InitKind::Zeros;
  double a = 0, b = 0;
};

/// How training treats a parameter: a layer's `trainable:` and `lr_scale:`.
struct ParamTraining {
  bool trainable = true;          ///< false: optimizers leave the value as it is
  float learningRateScale = 1.0f; ///< the optimizer's learning rate is multiplied by this
};

struct Param {
  std::string name;
  std::vector<int64_t> shape;
  InitSpec init;
  ParamTraining training;
  std::vector<float> value;
  /// Owned by the ParamStore: a dense parameter's lies in its one block of
  /// dense gradients (ParamStore::denseGradients), which data-parallel ranks
  /// sum in place.
  std::span<float> grad;
  /// Embedding tables: gradients (and optimizer updates) touch only the rows
  /// that were used, listed in `touchedRows`.
  bool sparseRows = false;
  std::vector<int32_t> touchedRows;
  std::vector<uint8_t> rowTouched;
  /// A weight's gradient x^T dy collected during a backward pass
  /// (ParamStore::deferWeightGradients): the rows of x and dy of every batch,
  /// multiplied once at the end. One GEMM over all of a pass's rows reads and
  /// writes the gradient once, not once per batch (a small minibatch has
  /// batches of a few rows at each of many depths). Rows of x that the
  /// pass keeps (a kernel's saved values) are read where they are; dy rows
  /// are written here by the kernel (placeDy) or copied. Each batch's dy
  /// rows start on a cache line, as a kernel's own matrices do: Eigen
  /// computes the elements before the first aligned one by its scalar code,
  /// whose rounding can differ from its vector code's (a contracted
  /// multiply-add), so results would depend on where the rows landed.
  struct DeferredProduct {
    bool active = false;
    int64_t in = 0, out = 0; ///< widths of x and dy
    /// A run of x's rows: at `kept` (alive until the pass ends), else copied
    /// into `xCopies` from row `copiedFrom` on.
    struct XRun {
      const float *kept;
      int64_t copiedFrom, rows;
    };
    std::vector<XRun> xRuns;
    /// Where each run of dy's rows starts in `dy` (a float index), paired
    /// with the x run of the same index (which has its row count).
    std::vector<int64_t> dyStarts;
    BulkVector<float> xCopies, dy;
  };
  DeferredProduct deferred;

  int64_t size() const { return int64_t(value.size()); }
  int64_t rowWidth() const { return shape.empty() ? 1 : shape.back(); }
  int64_t rows() const { return size() / rowWidth(); }
  /// Adds row r of `grads` (`count` rows of rowWidth()) to the gradient of
  /// row indices[r] and marks those rows touched: embedding backward.
  void scatterAddRows(const int32_t *indices, int count, const float *grads) {
    int64_t w = rowWidth();
    for (int r = 0; r < count; ++r) {
      touchRow(indices[r]);
      float *g = grad.data() + indices[r] * w;
      for (int64_t k = 0; k < w; ++k)
        g[k] += grads[r * w + k];
    }
  }
  /// Collects `rows` rows of x (`in` wide) and dy (`out` wide) for a
  /// deferred x^T dy (`deferred.active` must be set). `xKept`: x's rows stay
  /// where they are until the pass ends, so they are not copied.
  void deferProduct(const float *x, bool xKept, const float *dy, int64_t rows, int64_t in,
                    int64_t out) {
    deferX(x, xKept, rows, in);
    std::copy_n(dy, rows * out, placeDy(rows, out));
  }
  /// The x half of deferProduct(), for dy rows already placed.
  void deferX(const float *x, bool xKept, int64_t rows, int64_t in) {
    DeferredProduct &d = deferred;
    d.in = in;
    int64_t copiedFrom = int64_t(d.xCopies.size()) / in;
    if (!xKept)
      d.xCopies.insert(d.xCopies.end(), x, x + rows * in);
    d.xRuns.push_back({xKept ? x : nullptr, copiedFrom, rows});
  }
  /// Room for `rows` rows of dy (`out` wide) in the deferred product,
  /// unwritten: the kernel computes its dy there and then calls deferX().
  /// Valid until the next placeDy() or deferProduct() of this parameter.
  float *placeDy(int64_t rows, int64_t out) {
    DeferredProduct &d = deferred;
    d.out = out;
    constexpr size_t kLine = 64 / sizeof(float); // BulkVector's blocks start on a line
    size_t at = (d.dy.size() + kLine - 1) / kLine * kLine;
    d.dy.resize(at + size_t(rows * out));
    d.dyStarts.push_back(int64_t(at));
    return d.dy.data() + at;
  }
  /// Marks row `r` as having a gradient this step.
  void touchRow(int32_t r) {
    if (!rowTouched[r]) {
      rowTouched[r] = 1;
      touchedRows.push_back(r);
    }
  }
  /// Zeroes the gradient (of a sparse table, only the touched rows, which
  /// it then forgets).
  void zeroGradient();
  /// Marks every row untouched (their gradients must be zero already).
  void forgetTouchedRows() {
    for (int32_t r : touchedRows)
      rowTouched[r] = 0;
    touchedRows.clear();
  }
};

/// A shape as text: "[300, 150]".
std::string shapeText(const std::vector<int64_t> &shape);

/// Owns every parameter of a model, addressed by a dense id.
class ParamStore {
public:
  ParamStore() = default;
  /// Parameters' `grad` point into the store's own gradient block.
  ParamStore(const ParamStore &) = delete;
  ParamStore &operator=(const ParamStore &) = delete;
  ParamStore(ParamStore &&) = default; // the block moves with its spans
  ParamStore &operator=(ParamStore &&) = default;

  /// Declares a parameter; returns its id. Names must be unique.
  int add(std::string name, std::vector<int64_t> shape, InitSpec init, bool sparseRows = false,
          ParamTraining training = {});
  Param &at(int id) { return params_[size_t(id)]; }
  const Param &at(int id) const { return params_[size_t(id)]; }
  /// The id of the parameter called `name`, or -1.
  int find(const std::string &name) const;
  int count() const { return int(params_.size()); }
  /// The gradients of every parameter without sparse rows, one contiguous
  /// block in declaration order (each starting on a cache line; the gaps
  /// stay zero): what data-parallel ranks sum every step.
  std::span<float> denseGradients() { return denseGradients_; }

  /// Fills every parameter from its initialiser. Each parameter draws from
  /// its own generator seeded by (seed, name), so adding a parameter does not
  /// change the others.
  void initialize(uint64_t seed);
  /// Zeroes the gradients (for sparse tables, only the touched rows).
  void zeroGrads();
  /// Until flushDeferredGradients(), linear layers collect the rows of their
  /// weight gradients instead of multiplying them (Param::DeferredProduct).
  void deferWeightGradients();
  /// Adds each collected x^T dy to its weight's gradient, one GEMM per weight.
  void flushDeferredGradients();

private:
  /// Gives `p` (not yet in params_) its gradient, zero: at the end of the
  /// dense block, or a block of its own for sparse rows.
  void addGradient(Param &p);

  /// Allocates on cache-line boundaries (C++17 aligned new).
  template <class T> struct CacheLineAllocator {
    using value_type = T;
    CacheLineAllocator() = default;
    template <class U> CacheLineAllocator(const CacheLineAllocator<U> &) {}
    T *allocate(size_t n) {
      return static_cast<T *>(::operator new(n * sizeof(T), std::align_val_t(64)));
    }
    void deallocate(T *p, size_t) { ::operator delete(p, std::align_val_t(64)); }
    bool operator==(const CacheLineAllocator &) const = default;
  };
  using GradientBlock = std::vector<float, CacheLineAllocator<float>>;

  std::vector<Param> params_;
  /// The dense parameters' gradients in declaration order, each starting on
  /// a cache line; the gaps stay zero.
  GradientBlock denseGradients_;
  /// Each sparse-row parameter's gradient (an embedding table's can be large:
  /// it never moves or gets copied when parameters are added).
  std::vector<GradientBlock> sparseGradients_;
};

} // namespace foldc::rt
