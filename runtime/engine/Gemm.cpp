// Row-major sgemm: the panel kernel where it applies (PanelGemm.h), else
// OpenBLAS's CBLAS interface, single-threaded; with more GEMM threads, C's
// rows are split among them. And the per-pass panels of weights.
#include "runtime/engine/Gemm.h"

#include "runtime/engine/Bf16Gemm.h"
#include "runtime/engine/GemmClock.h"
#include "runtime/engine/PanelGemm.h"
#include "runtime/engine/WorkerPool.h"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

// OpenBLAS's own; declared here so that any cblas.h will do.
extern "C" void openblas_set_num_threads(int threads);

namespace foldc::rt {

namespace {

/// Results must not depend on the thread count: every GEMM is computed by
/// the same single-threaded kernel, chosen by its shape alone, and more
/// threads only take parts of C's rows, never of the summed dimension.
/// Splits fall on multiples of kRowsPerPart, so a row has the same place in
/// its kernel's row blocks whatever the split.
constexpr int64_t kRowsPerPart = 64;

/// The threads beyond the caller's (setGemmThreads); none with one. One
/// GEMM uses them at a time: another runs on its own caller's thread.
std::unique_ptr<WorkerPool> gemmPool;
std::mutex gemmPoolInUse;

/// Runs `rows(first, last)` over [0, m): in parts on the GEMM threads when
/// there are rows enough for two parts and the threads are free, else at once.
template <typename Rows> void splitRows(int64_t m, const Rows &rows) {
  std::unique_lock inUse(gemmPoolInUse, std::defer_lock);
  if (!gemmPool || m < 2 * kRowsPerPart || !inUse.try_lock())
    return rows(0, m);
  int64_t blocks = (m + kRowsPerPart - 1) / kRowsPerPart;
  int parts = int(std::min<int64_t>(gemmPool->size(), blocks));
  gemmPool->run([&](int part) {
    if (part >= parts)
      return;
    int64_t first = blocks * part / parts * kRowsPerPart;
    int64_t last = std::min(m, blocks * (part + 1) / parts * kRowsPerPart);
    rows(first, last);
  });
}

/// op(A)'s rows from `first` on: rows of A, or its columns when transposed.
const float *rowsFrom(const float *a, Transpose ta, int64_t lda, int64_t first) {
  return ta == Transpose::No ? a + first * lda : a + first;
}

/// The panel kernel takes every width, a narrow C (a classifier's few
/// classes) too, though most of its one panel's 32 columns are then idle:
/// OpenBLAS sums a narrow product's columns in an order that depends on the
/// row count, and batched results must equal unbatched ones to the bit.
/// (Unused where the kernel is not built: its callers are behind
/// `if constexpr (kPanelGemmBuilt)`.)
[[maybe_unused]] bool panelGemmApplies(int64_t n, float beta) {
  return kPanelGemmBuilt && n >= 1 && (beta == 0.0f || beta == 1.0f);
}

/// panelGemm() with C's rows split over the GEMM threads.
[[maybe_unused]] void splitPanelGemm(Transpose ta, int64_t m, int64_t n, int64_t k, const float *a,
                                     int64_t lda, const float *panels, float beta, float *c,
                                     int64_t ldc) {
  splitRows(m, [&](int64_t first, int64_t last) {
    panelGemm(ta, last - first, n, k, rowsFrom(a, ta, lda, first), lda, panels, beta,
              c + first * ldc, ldc);
  });
}

void blasGemm(Transpose ta, Transpose tb, int64_t m, int64_t n, int64_t k, const float *a,
              int64_t lda, const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  auto op = [](Transpose t) { return t == Transpose::Yes ? CblasTrans : CblasNoTrans; };
  splitRows(m, [&](int64_t first, int64_t last) {
    cblas_sgemm(CblasRowMajor, op(ta), op(tb), int(last - first), int(n), int(k), 1.0f,
                rowsFrom(a, ta, lda, first), int(lda), b, int(ldb), beta, c + first * ldc,
                int(ldc));
  });
}

/// Memory for packed panels, grown without zero-filling or copying: every use
/// packs it anew, so a batch bigger than the last costs neither a memset nor
/// a memmove (a vector's resize did both, 8% of an LSTM language model's
/// step: its vocabulary-wide weight gradient packs a batch-sized operand).
template <class T> class PanelBuffer {
public:
  T *reserve(size_t elements) {
    if (elements > capacity_) {
      capacity_ = std::max(elements, capacity_ + capacity_ / 2);
      data_.reset(new T[capacity_]);
    }
    return data_.get();
  }
  const T *data() const { return data_.get(); }

private:
  std::unique_ptr<T[]> data_;
  size_t capacity_ = 0;
};

/// This thread's weight panels: each packed at most once per WeightPass.
/// Entries keep their memory from pass to pass (the same weights come back
/// every step); `pass` says which pass packed them.
struct WeightPanels {
  // B, transposed, k, n, ldb, precision
  using Key = std::tuple<const float *, bool, int64_t, int64_t, int64_t, Precision>;
  struct Entry {
    uint64_t pass = 0;
    PanelBuffer<float> panels;  ///< Precision::F32
    PanelBuffer<uint16_t> bf16; ///< Precision::Bf16
  };
  std::map<Key, Entry> entries;
  uint64_t pass = 0; ///< the live pass's number; 0 when none
  uint64_t passes = 0;
};
thread_local WeightPanels weightPanels;

/// The live pass's entry for `key`, packed by `pack(entry)` first when an
/// earlier pass (or none) packed it.
template <class Pack>
WeightPanels::Entry &passEntry(WeightPanels &cache, const WeightPanels::Key &key, Pack pack) {
  WeightPanels::Entry &entry = cache.entries[key];
  if (entry.pass != cache.pass) {
    pack(entry);
    entry.pass = cache.pass;
  }
  return entry;
}

/// This thread's gemmWithWeights precision (PrecisionScope).
thread_local Precision weightPrecision = Precision::F32;

/// Panels for op(B), packed into `scratch` (or reused from this pass).
[[maybe_unused]] const float *panelsOf(Transpose tb, int64_t k, int64_t n, const float *b,
                                       int64_t ldb, PanelBuffer<float> &scratch) {
  float *panels = scratch.reserve(size_t(k * kPanelWidth * panelCount(n)));
  packPanels(tb, k, n, b, ldb, panels);
  return panels;
}

/// gemmWithWeights in bf16 (Bf16Gemm.h), C's rows split over the GEMM
/// threads; the panels come from this pass's cache, or are packed for this
/// call on a thread without a pass.
[[maybe_unused]] void bf16GemmWithWeights(Transpose tb, int64_t m, int64_t n, int64_t k,
                                          const float *a, int64_t lda, const float *weights,
                                          int64_t ldw, float beta, float *c, int64_t ldc) {
  GemmClock::Scope timing(2 * m * n * k);
  WeightPanels &cache = weightPanels;
  thread_local PanelBuffer<uint16_t> scratch;
  auto pack = [&](PanelBuffer<uint16_t> &into) {
    uint16_t *packed = into.reserve(size_t(bf16PanelSize(k, n)));
    packBf16Panels(tb == Transpose::Yes, k, n, weights, ldw, packed);
    return packed;
  };
  const uint16_t *panels =
      cache.pass == 0
          ? pack(scratch)
          : passEntry(cache, {weights, tb == Transpose::Yes, k, n, ldw, Precision::Bf16},
                      [&](WeightPanels::Entry &entry) { pack(entry.bf16); })
                .bf16.data();
  splitRows(m, [&](int64_t first, int64_t last) {
    bf16PanelGemm(last - first, n, k, a + first * lda, lda, panels, beta, c + first * ldc, ldc);
  });
}

} // namespace

bool bf16Available(const char **why) {
  const char *reason = nullptr;
  if (!kBf16GemmBuilt)
    reason = "this foldc runtime was built for a CPU without AVX-512 BF16 (vdpbf16ps); build it "
             "with -march=native on one that has it";
  else if (!bf16GemmAvailable())
    reason = "this CPU has no AVX-512 BF16 (vdpbf16ps)";
  if (why)
    *why = reason;
  return reason == nullptr;
}

PrecisionScope::PrecisionScope(Precision precision) : before_(weightPrecision) {
  weightPrecision = precision;
}

PrecisionScope::~PrecisionScope() { weightPrecision = before_; }

void gemm(Transpose ta, Transpose tb, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
          const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  if (m == 0 || n == 0)
    return;
  GemmClock::Scope timing(2 * m * n * k);
  if constexpr (kPanelGemmBuilt) {
    if (panelGemmApplies(n, beta)) {
      thread_local PanelBuffer<float> scratch;
      splitPanelGemm(ta, m, n, k, a, lda, panelsOf(tb, k, n, b, ldb, scratch), beta, c, ldc);
      return;
    }
  }
  blasGemm(ta, tb, m, n, k, a, lda, b, ldb, beta, c, ldc);
}

void gemmPointedRows(int64_t m, int64_t n, int64_t k, const float *const *aRows,
                     const float *const *bRows, float *c, int64_t ldc) {
  if (m == 0 || n == 0)
    return;
  if constexpr (kPanelGemmBuilt) {
    GemmClock::Scope timing(2 * m * n * k);
    thread_local PanelBuffer<float> scratch;
    float *panels = scratch.reserve(size_t(k * kPanelWidth * panelCount(n)));
    packPointedRows(k, n, bRows, panels);
    splitRows(m, [&](int64_t first, int64_t last) {
      panelGemmPointedRows(last - first, n, k, aRows, first, panels, 1.0f, c + first * ldc, ldc);
    });
    return;
  }
  std::vector<float> a(size_t(k * m)), b(size_t(k * n)); // no panel kernel: copies for OpenBLAS
  for (int64_t kk = 0; kk < k; ++kk) {
    std::copy_n(aRows[kk], m, a.begin() + kk * m);
    std::copy_n(bRows[kk], n, b.begin() + kk * n);
  }
  gemm(Transpose::Yes, Transpose::No, m, n, k, a.data(), m, b.data(), n, 1.0f, c, ldc);
}

void gemmWithWeights(Transpose ta, Transpose tb, int64_t m, int64_t n, int64_t k, const float *a,
                     int64_t lda, const float *weights, int64_t ldw, float beta, float *c,
                     int64_t ldc) {
  if constexpr (kBf16GemmBuilt) {
    if (weightPrecision == Precision::Bf16 && ta == Transpose::No && m != 0 &&
        panelGemmApplies(n, beta))
      return bf16GemmWithWeights(tb, m, n, k, a, lda, weights, ldw, beta, c, ldc);
  }
  WeightPanels &cache = weightPanels;
  if constexpr (kPanelGemmBuilt) {
    if (cache.pass != 0 && m != 0 && panelGemmApplies(n, beta)) {
      GemmClock::Scope timing(2 * m * n * k);
      WeightPanels::Entry &entry =
          passEntry(cache, {weights, tb == Transpose::Yes, k, n, ldw, Precision::F32},
                    [&](WeightPanels::Entry &e) { panelsOf(tb, k, n, weights, ldw, e.panels); });
      splitPanelGemm(ta, m, n, k, a, lda, entry.panels.data(), beta, c, ldc);
      return;
    }
  }
  gemm(ta, tb, m, n, k, a, lda, weights, ldw, beta, c, ldc);
}

WeightPass::WeightPass() {
  // A step's forward and backward passes pack their weights in the two
  // orientations: panels unused for longer belong to weights gone or used
  // no more (a model freed, a gradient check's many forwards).
  WeightPanels &cache = weightPanels;
  cache.pass = ++cache.passes;
  std::erase_if(cache.entries,
                [&](const auto &entry) { return entry.second.pass + 2 < cache.pass; });
}

WeightPass::~WeightPass() { weightPanels.pass = 0; }

void setGemmThreads(int threads) {
  openblas_set_num_threads(1); // its threads would split k for some shapes
  std::lock_guard noGemmRunning(gemmPoolInUse);
  gemmPool = threads > 1 ? std::make_unique<WorkerPool>(threads) : nullptr;
}

} // namespace foldc::rt
