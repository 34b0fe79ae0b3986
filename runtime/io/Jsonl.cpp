// JSONL reading with located errors.
#include "runtime/io/Jsonl.h"

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <vector>

namespace foldc::rt {

using nlohmann::json;

JsonPath JsonPath::field(const std::string &name) const {
  JsonPath p(*file_, line_);
  p.parent_ = this;
  p.field_ = name;
  return p;
}

JsonPath JsonPath::index(size_t i) const {
  JsonPath p(*file_, line_);
  p.parent_ = this;
  p.index_ = i;
  return p;
}

std::string JsonPath::path() const {
  std::vector<const JsonPath *> steps;
  for (const JsonPath *p = this; p->parent_; p = p->parent_)
    steps.push_back(p);
  std::string text;
  for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
    if (!(*it)->field_.empty())
      text += (text.empty() ? "" : ".") + (*it)->field_;
    else
      text += "[" + std::to_string((*it)->index_) + "]";
  }
  return text;
}

void JsonPath::fail(const std::string &expected) const {
  std::string at = path();
  throw DataError(*file_ + ":" + std::to_string(line_) + ": " + (at.empty() ? "example" : at) +
                  ": " + expected);
}

/// What was found instead: a scalar as written (shortened), a container by
/// its kind (dumping one nested 10^5 deep would recurse as deep).
static std::string found(const json &value) {
  if (value.is_array())
    return "found an array of " + std::to_string(value.size());
  if (value.is_object())
    return "found an object";
  std::string text = value.dump();
  if (text.size() > 40)
    text = text.substr(0, 37) + "...";
  return "found " + text;
}

int64_t readInt(const json &value, const JsonPath &at) {
  if (!value.is_number_integer())
    at.fail("expected an integer, " + found(value));
  if (value.is_number_unsigned() &&
      value.get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max()))
    at.fail("expected an integer that fits in 64 bits, found " + value.dump());
  return value.get<int64_t>();
}

double readFloat(const json &value, const JsonPath &at) {
  if (!value.is_number())
    at.fail("expected a number, " + found(value));
  double v = value.get<double>();
  // Values are f32 in every kernel: a larger one would be an infinity there.
  if (std::abs(v) > double(std::numeric_limits<float>::max()))
    at.fail("expected a number within the range of f32 (magnitude at most 3.4e38), found " +
            value.dump());
  return v;
}

bool readBool(const json &value, const JsonPath &at) {
  if (!value.is_boolean())
    at.fail("expected true or false, " + found(value));
  return value.get<bool>();
}

std::string readString(const json &value, const JsonPath &at) {
  if (!value.is_string())
    at.fail("expected a string, " + found(value));
  return value.get<std::string>();
}

const json &readArray(const json &value, const JsonPath &at) {
  if (!value.is_array())
    at.fail("expected an array, " + found(value));
  return value;
}

const json &readTupleArray(const json &value, const JsonPath &at, size_t size) {
  if (!value.is_array() || value.size() != size)
    at.fail("expected an array of " + std::to_string(size) + " elements, " + found(value));
  return value;
}

namespace {
std::atomic<bool> allowUnknownFields{false};
} // namespace

void setAllowUnknownFields(bool allow) { allowUnknownFields = allow; }

const json &readRecord(const json &value, const JsonPath &at,
                       std::initializer_list<const char *> fields) {
  if (!value.is_object())
    at.fail("expected an object, " + found(value));
  for (const char *f : fields)
    if (!value.contains(f))
      at.field(f).fail("missing field");
  if (allowUnknownFields)
    return value;
  for (const auto &[key, v] : value.items()) {
    bool known = false;
    for (const char *f : fields)
      known |= key == f;
    if (!known)
      at.field(key).fail("unknown field");
  }
  return value;
}

std::string readVariant(const json &value, const JsonPath &at, const json *&payload) {
  static const json empty = json::object();
  if (value.is_string()) {
    payload = &empty;
    return value.get<std::string>();
  }
  if (!value.is_object() || value.size() != 1)
    at.fail("expected an object with one key, the variant, " + found(value));
  payload = &value.begin().value();
  return value.begin().key();
}

void forEachJsonLine(const std::string &file,
                     const std::function<void(const json &, const JsonPath &)> &onLine) {
  if (std::filesystem::is_directory(file))
    throw DataError(file + ": is a directory, not a JSON Lines file");
  std::ifstream in(file);
  if (!in)
    throw DataError(file + ": cannot open for reading");
  std::string line;
  for (long number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos)
      continue;
    JsonPath at(file, number);
    if (size_t nul = line.find('\0'); nul != std::string::npos)
      at.fail("a NUL byte at column " + std::to_string(nul + 1) + " (not a text line)");
    json value = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded())
      at.fail("invalid JSON");
    onLine(value, at);
  }
}

} // namespace foldc::rt
