// The C++ emitter.
#include "codegen/Emitter.h"

#include <cstdio>

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

std::string stringLiteral(const std::string &text) {
  std::string out = "std::string(\"";
  for (unsigned char c : text) {
    if (c == '"' || c == '\\')
      out += '\\', out += char(c);
    else if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c < 0x20 || c >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", c);
      out += buf;
    } else
      out += char(c);
  }
  return out + "\")";
}

} // namespace foldc
