// Writing C++ source: indentation and scopes.
#pragma once

#include <sstream>
#include <string>

namespace foldc {

/// A C++ expression `std::string("...")` holding `text`, escaped.
std::string stringLiteral(const std::string &text);

/// "a, b, c": `text(item)` for each of `items`, separated by commas.
template <class Range, class Text> std::string commaSeparated(const Range &items, Text text) {
  std::string out;
  for (const auto &item : items)
    out += (out.empty() ? "" : ", ") + text(item);
  return out;
}

/// Accumulates C++ text line by line at the current indentation.
class Emitter {
public:
  /// Writes one line at the current indentation ("" writes an empty line).
  Emitter &line(const std::string &text = "");

  /// A block: writes `open`, indents until destroyed, then writes `close`.
  class Scope {
  public:
    Scope(Emitter &e, std::string close) : emitter_(&e), close_(std::move(close)) {}
    Scope(Scope &&other) noexcept : emitter_(other.emitter_), close_(std::move(other.close_)) {
      other.emitter_ = nullptr;
    }
    Scope(const Scope &) = delete;
    ~Scope();

  private:
    Emitter *emitter_;
    std::string close_;
  };
  [[nodiscard]] Scope scope(const std::string &open, const std::string &close = "}");

  std::string str() const { return out_.str(); }

private:
  std::ostringstream out_;
  int indent_ = 0;
};

} // namespace foldc
