// The rounds of interleaved unfolding and execution (see Agenda.h).
#include "runtime/engine/Agenda.h"

#include <algorithm>
#include <utility>

namespace foldc::rt {

bool Agenda::allComputed(std::span<const ValueRef> refs) const {
  return std::all_of(refs.begin(), refs.end(),
                     [&](const ValueRef &ref) { return executor_.isComputed(ref.instance); });
}

void Agenda::wait(std::coroutine_handle<> coroutine, int example, std::span<const ValueRef> refs) {
  waiting_.push_back({coroutine, example});
  awaited_.insert(awaited_.end(), refs.begin(), refs.end());
}

void Agenda::resume(std::coroutine_handle<> coroutine, int example) {
  graph_.switchToExample(example);
  coroutine.resume();
}

void Agenda::round(RunScope scope) {
  std::vector<ValueRef> awaited = std::exchange(awaited_, {});
  switch (scope) {
  case RunScope::All:
    executor_.runPending();
    break;
  case RunScope::OnlyFor:
    executor_.runPendingFor(awaited);
    break;
  }
  for (const Waiting &w : std::exchange(waiting_, {}))
    resume(w.coroutine, w.example);
}

std::vector<std::span<const float>> AllComputed::await_resume() const {
  std::vector<std::span<const float>> values;
  values.reserve(refs.size());
  for (const ValueRef &ref : refs)
    values.push_back(agenda->value(ref));
  return values;
}

} // namespace foldc::rt
