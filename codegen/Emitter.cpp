// The C++ emitter.
#include "codegen/Emitter.h"

namespace foldc {

Emitter &Emitter::line(const std::string &text) {
  if (!text.empty())
    out_ << std::string(size_t(2 * indent_), ' ') << text;
  out_ << '\n';
  return *this;
}

Emitter::Scope Emitter::scope(const std::string &open, const std::string &close) {
  line(open);
  ++indent_;
  return Scope(*this, close);
}

Emitter::Scope::~Scope() {
  if (!emitter_)
    return;
  --emitter_->indent_;
  emitter_->line(close_);
}


} // namespace foldc
