// eval and check (see Evaluation.h).
#include "runtime/driver/Evaluation.h"

#include "runtime/driver/InitialParams.h"

#include <iostream>

namespace foldc::rt {

BatchResult evaluate(Session &session, const Dataset &data) {
  std::vector<int32_t> all = data.indices();
  std::vector<int32_t> mine =
      session.processes.size() == 1 ? all : shareOf(session, data, all).examples;
  BatchResult total;
  for (size_t at = 0; at < mine.size(); at += size_t(session.options.batchSize)) {
    auto batch = session.batchAt(mine, at);
    total.add(located(session, data, batch,
                      [&] { return session.model.eval(data.set, batch, session.runOptions()); }));
  }
  return session.summed(total);
}

int eval(Session &session) {
  Dataset data = loadExamples(session, 0, session.options.data, session.options.limit);
  startParams(session);
  BatchResult result = evaluate(session, data);
  if (!session.leader())
    return 0;
  std::cout << result.toJson(session.model.metricNames()).dump() << std::endl;
  return flushed();
}

int check(Session &session) {
  if (!session.leader()) // one verdict: the other ranks of an mpirun have nothing to do
    return 0;
  Dataset data = loadExamples(session, 0, session.options.data, session.options.limit);
  startParams(session, false);
  std::vector<int32_t> all = data.indices();
  GradientCheck c = located(session, data, all, [&] {
    return session.model.checkGradients(data.set, all, session.options.step);
  });
  nlohmann::json report = {{"probes", c.probes},
                           {"failures", c.failures},
                           {"kinks", c.kinks},
                           {"decisions", c.decisions},
                           {"worst", c.worst},
                           {"worst_at", c.worstAt},
                           {"batched_equals_unbatched", c.batchedEqualsUnbatched}};
  if (!c.batchedEqualsUnbatched)
    report["mismatch_at"] = c.mismatchAt;
  std::cout << report.dump() << std::endl;
  return c.passed() ? 0 : 1;
}

} // namespace foldc::rt
