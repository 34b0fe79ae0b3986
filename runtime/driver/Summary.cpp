// `NAME info` (see Summary.h).
#include "runtime/driver/Summary.h"

#include <cstdint>
#include <vector>

namespace foldc::rt {

namespace {

/// 6510300 as "6,510,300".
std::string grouped(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i && (digits.size() - i) % 3 == 0)
      out += ',';
    out += digits[i];
  }
  return out;
}

} // namespace

void printSummary(const std::string &name, const DriverModel &model, std::ostream &out) {
  struct Owner {
    std::string name, params;
    int64_t weights = 0;
  };
  std::vector<Owner> owners;
  const ParamStore &params = model.params();
  int64_t total = 0;
  for (int id = 0; id < params.count(); ++id) {
    const Param &p = params.at(id);
    size_t dot = p.name.rfind('.');
    std::string owner = dot == std::string::npos ? "(global)" : p.name.substr(0, dot);
    if (owners.empty() || owners.back().name != owner)
      owners.push_back({owner, "", 0});
    int64_t weights = p.size();
    Owner &o = owners.back();
    o.params += (o.params.empty() ? "" : ", ") + p.name.substr(dot + 1) + " " + shapeText(p.shape) +
                (p.sparseRows ? " (rows updated when used)" : "");
    o.weights += weights;
    total += weights;
  }
  out << name << ": " << grouped(total) << " weights (" << (total * 4 + (1 << 19)) / (1 << 20)
      << " MiB as f32) in " << params.count() << " parameters\n";
  for (const Owner &o : owners) {
    std::string weights = grouped(o.weights);
    out << "  " << o.name << std::string(o.name.size() < 16 ? 16 - o.name.size() : 1, ' ')
        << std::string(weights.size() < 11 ? 11 - weights.size() : 0, ' ') << weights << "  "
        << o.params << "\n";
  }
  out << model.kernels().size() << " kernels (one per batching key):\n";
  for (const std::unique_ptr<Kernel> &k : model.kernels()) {
    const Kernel::Signature &sig = k->signature();
    std::vector<int64_t> in(sig.argWidths.begin(), sig.argWidths.end());
    std::vector<int64_t> results(sig.outWidths.begin(), sig.outWidths.end());
    out << "  " << sig.name << ": row widths in " << shapeText(in) << ", out " << shapeText(results)
        << ", " << grouped(int64_t(sig.flops)) << " FLOPs per instance\n";
  }
  out << "metrics:";
  for (const std::string &m : model.metricNames())
    out << " " << m;
  out << (model.metricNames().empty() ? " none\n" : "\n");
}

} // namespace foldc::rt
