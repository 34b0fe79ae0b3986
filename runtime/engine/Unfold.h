// Helpers that generated unfolding code calls on host values and handles.
#pragma once

#include "runtime/engine/BatchGraph.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace foldc::rt {

/// A structural error in an example (a list of the wrong length, an empty
/// reduction...): the driver reports it with the example's position.
class UnfoldError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// `vector(n, xs)`: appends the n numbers of `xs` to an instance's floats.
template <class List> void appendVector(std::vector<float> &floats, const List &xs, int n) {
  if (xs.size() != size_t(n))
    throw UnfoldError("vector(" + std::to_string(n) + ", xs): xs has " + std::to_string(xs.size()) +
                      " numbers");
  for (const auto &x : xs)
    floats.push_back(float(x));
}

/// A host integer (an id, a label) as a kernel's 32-bit host value; one
/// that does not fit is an error of the example, not a different id.
inline int32_t hostInt(int64_t value) {
  if (value < INT32_MIN || value > INT32_MAX)
    throw UnfoldError("the integer " + std::to_string(value) + " does not fit in 32 bits");
  return int32_t(value);
}

/// A host list passed to an imported C++ function: converts to the vector
/// type it takes (`std::vector<int>` from a list of int64_t, say).
template <class T> struct HostList {
  const std::vector<T> &values;
  template <class U> operator std::vector<U>() const {
    return std::vector<U>(values.begin(), values.end());
  }
};
template <class T> HostList<T> hostList(const std::vector<T> &values) { return {values}; }

/// `reduce(f, xs)` of an empty list without a default.
template <class T> T emptyReduce() {
  throw UnfoldError("reduce over an empty list without a default value");
}

/// `nth(i, xs)`.
template <class List> const typename List::value_type &nth(long long i, const List &xs) {
  if (i < 0 || size_t(i) >= xs.size())
    throw UnfoldError("nth(" + std::to_string(i) + ", xs): xs has " + std::to_string(xs.size()) +
                      " elements");
  return xs[size_t(i)];
}

/// `xs[lo:hi]` (`xs[lo:]` without hi), bounds clamped to the list as in
/// Fold's Slice; negative bounds count from the end.
template <class List> List sliceList(const List &xs, long long lo, long long hi) {
  long long n = (long long)xs.size();
  auto clamp = [n](long long i) { return i < 0 ? std::max(0LL, n + i) : std::min(n, i); };
  lo = clamp(lo);
  hi = clamp(hi);
  return lo < hi ? List(xs.begin() + lo, xs.begin() + hi) : List();
}
template <class List> List sliceList(const List &xs, long long lo) {
  return sliceList(xs, lo, (long long)xs.size());
}

/// A computed f32 scalar read by unfolding (`co_await untilComputed(ref)`
/// gives its value).
inline double computedFloat(std::span<const float> value) { return double(value[0]); }
/// A computed i32 scalar (an argmax) read by unfolding.
inline int64_t computedInt(std::span<const float> value) { return int64_t(std::lround(value[0])); }

/// `concat(xs, ys, ...)` of lists: their elements one list after another.
template <class List, class... Lists> List concatLists(const List &first, const Lists &...rest) {
  List out = first;
  (out.insert(out.end(), rest.begin(), rest.end()), ...);
  return out;
}

/// `range(n)`: 0, 1, ..., n - 1 (empty when n <= 0).
inline std::vector<int64_t> range(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i)
    out.push_back(i);
  return out;
}

/// `gather(xs, ids)`: xs[i] for each i of ids, in order.
template <class List, class Ids> List gather(const List &xs, const Ids &ids) {
  List out;
  out.reserve(ids.size());
  for (int64_t i : ids) {
    if (i < 0 || size_t(i) >= xs.size())
      throw UnfoldError("gather: index " + std::to_string(i) + " is outside [0, " +
                        std::to_string(xs.size()) + ")");
    out.push_back(xs[size_t(i)]);
  }
  return out;
}

/// `segment_sum(xs, ids, n)` and its mean and max: one instance of the
/// variadic kernel `segment` per segment s in [0, n), whose arguments are
/// the values with id s (in list order); a segment without any gives zeros.
/// `what` names the builtin in errors.
inline std::vector<ValueRef> segmentReduce(BatchGraph &graph, const Kernel &segment,
                                           const std::vector<ValueRef> &xs,
                                           const std::vector<int64_t> &ids, int64_t n,
                                           const std::string &what) {
  if (xs.size() != ids.size())
    throw UnfoldError(what + ": " + std::to_string(xs.size()) + " values but " +
                      std::to_string(ids.size()) + " segment ids");
  if (n < 0)
    throw UnfoldError(what + ": the segment count is " + std::to_string(n));
  std::vector<std::vector<ValueRef>> members(static_cast<size_t>(n));
  for (size_t i = 0; i < xs.size(); ++i) {
    if (ids[i] < 0 || ids[i] >= n)
      throw UnfoldError(what + ": segment id " + std::to_string(ids[i]) + " is outside [0, " +
                        std::to_string(n) + ")");
    members[size_t(ids[i])].push_back(xs[i]);
  }
  std::vector<ValueRef> out;
  out.reserve(size_t(n));
  for (const std::vector<ValueRef> &m : members)
    out.push_back({graph.add(segment, m), 0});
  return out;
}

/// `reverse(xs)`: the elements last to first.
template <class List> List reversed(const List &xs) { return List(xs.rbegin(), xs.rend()); }

/// The bound of `loop` and `beam` (the most steps): at least 0, else an
/// error of the example (a negative count is a mistake, not "no steps").
inline int64_t loopBound(const char *what, int64_t max) {
  if (max < 0)
    throw UnfoldError(std::string(what) + ": the bound must be at least 0, found " +
                      std::to_string(max));
  return max;
}

/// `zip` and `zip_with` pair lists of one length: another is an error (a
/// pairing that silently dropped the longer list's tail lost data), which
/// names the call's source line and both lengths. Slicing says to truncate.
inline void requireSameLength(const char *what, int line, size_t xs, size_t ys) {
  if (xs != ys)
    throw UnfoldError(std::string(what) + " (line " + std::to_string(line) + "): lists of " +
                      std::to_string(xs) + " and " + std::to_string(ys) +
                      " elements; to pair the first ones only, slice them to one length "
                      "(xs[:length(ys)])");
}

/// `zip(xs, ys)`: the pairs of lists of one length.
template <class A, class B>
std::vector<std::tuple<typename A::value_type, typename B::value_type>> zip(const A &xs,
                                                                            const B &ys, int line) {
  requireSameLength("zip", line, xs.size(), ys.size());
  std::vector<std::tuple<typename A::value_type, typename B::value_type>> out;
  for (size_t i = 0; i < xs.size(); ++i)
    out.emplace_back(xs[i], ys[i]);
  return out;
}

namespace detail {
template <class List, size_t... I>
auto window(const List &xs, size_t at, std::index_sequence<I...>) {
  return std::make_tuple(xs[at + I]...);
}
} // namespace detail

/// `ngrams(n, xs)`: every run of N neighbours, as N-tuples.
template <size_t N, class List> auto ngrams(const List &xs) {
  using Gram = decltype(detail::window(xs, 0, std::make_index_sequence<N>{}));
  std::vector<Gram> out;
  for (size_t i = 0; i + N <= xs.size(); ++i)
    out.push_back(detail::window(xs, i, std::make_index_sequence<N>{}));
  return out;
}

/// `sum`, `max` or `min` across a sequence of tensors: neighbours combined
/// pairwise level by level (depth ceil(log2 n)) by `combine` (add, maximum,
/// minimum); an empty sequence gives `zeros`.
inline ValueRef sequencePairwise(BatchGraph &graph, std::vector<ValueRef> level,
                                 const Kernel &combine, const Kernel &zeros) {
  if (level.empty())
    return {graph.add(zeros, {}), 0};
  while (level.size() > 1) {
    std::vector<ValueRef> next;
    for (size_t i = 0; i + 1 < level.size(); i += 2)
      next.push_back({graph.add(combine, {level[i], level[i + 1]}), 0});
    if (level.size() % 2 == 1)
      next.push_back(level.back());
    level = std::move(next);
  }
  return level[0];
}

/// `mean(xs)`: the sum divided by n by `scale` (n is its host float); zeros when empty.
inline ValueRef sequenceMean(BatchGraph &graph, const std::vector<ValueRef> &xs, const Kernel &add,
                             const Kernel &zeros, const Kernel &scale) {
  ValueRef sum = sequencePairwise(graph, xs, add, zeros);
  if (xs.empty())
    return sum;
  return {graph.add(scale, {sum}, {}, {float(xs.size())}), 0};
}

/// `softmax(xs)` across a sequence of scalars: exp of each, divided by their
/// pairwise sum. (No max is subtracted: scores are expected in a moderate
/// range, e.g. after tanh, as in attention.)
inline std::vector<ValueRef> sequenceSoftmax(BatchGraph &graph, const std::vector<ValueRef> &xs,
                                             const Kernel &exp, const Kernel &add,
                                             const Kernel &zeros, const Kernel &divide) {
  std::vector<ValueRef> e;
  for (const ValueRef &x : xs)
    e.push_back({graph.add(exp, {x}), 0});
  ValueRef total = sequencePairwise(graph, e, add, zeros);
  std::vector<ValueRef> out;
  for (const ValueRef &x : e)
    out.push_back({graph.add(divide, {x, total}), 0});
  return out;
}

} // namespace foldc::rt
