// The safetensors format: an 8-byte little-endian header length, a JSON
// header {"name": {"dtype", "shape", "data_offsets": [begin, end]}, ...},
// then the raw data. See https://github.com/huggingface/safetensors.
#include "runtime/io/Safetensors.h"

#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace foldc::rt {

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string &path, const std::string &what) {
  throw SafetensorsError(path + ": " + what);
}

std::string readAll(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    fail(path, "cannot open for reading");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Entry {
  std::string name;
  std::vector<int64_t> shape;
  uint64_t begin, end;
};

Entry parseEntry(const std::string &path, const std::string &name, const json &info) {
  std::string where = "tensor '" + name + "': ";
  if (!info.is_object())
    fail(path, where + "header entry is not an object");
  if (!info.contains("dtype") || !info["dtype"].is_string())
    fail(path, where + "missing dtype");
  if (info["dtype"] != "F32")
    fail(path, where + "dtype " + info["dtype"].get<std::string>() + ", expected F32");
  if (!info.contains("shape") || !info["shape"].is_array())
    fail(path, where + "missing shape");
  Entry e{name, {}, 0, 0};
  for (const json &d : info["shape"]) {
    if (!d.is_number_unsigned())
      fail(path, where + "shape holds a non-integer or negative dimension");
    e.shape.push_back(d.get<int64_t>());
  }
  const json &offsets = info.contains("data_offsets") ? info["data_offsets"] : json();
  if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
      !offsets[1].is_number_unsigned())
    fail(path, where + "data_offsets must be [begin, end]");
  e.begin = offsets[0].get<uint64_t>();
  e.end = offsets[1].get<uint64_t>();
  uint64_t elements = 1;
  for (int64_t d : e.shape) {
    if (d != 0 && elements > (uint64_t(1) << 60) / uint64_t(d))
      fail(path, where + "shape " + shapeText(e.shape) + " is too large");
    elements *= uint64_t(d);
  }
  if (e.end < e.begin || e.end - e.begin != elements * 4)
    fail(path, where + "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                   "] do not hold shape " + shapeText(e.shape) + " of F32 (" +
                   std::to_string(elements * 4) + " bytes)");
  return e;
}

} // namespace

std::map<std::string, TensorData> readSafetensors(const std::string &path,
                                                  std::map<std::string, std::string> *metadata) {
  std::string bytes = readAll(path);
  if (bytes.size() < 8)
    fail(path, "file is shorter than the 8-byte header length");
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | uint8_t(bytes[size_t(i)]);
  if (headerSize > bytes.size() - 8)
    fail(path, "header length " + std::to_string(headerSize) + " exceeds the file size");
  json header = json::parse(bytes.begin() + 8, bytes.begin() + 8 + long(headerSize), nullptr,
                            /*allow_exceptions=*/false);
  if (header.is_discarded())
    fail(path, "header is not valid JSON");
  if (!header.is_object())
    fail(path, "header is not a JSON object");
  std::vector<Entry> entries;
  for (const auto &[name, info] : header.items())
    if (name != "__metadata__")
      entries.push_back(parseEntry(path, name, info));
  if (metadata && header.contains("__metadata__")) {
    const json &meta = header["__metadata__"];
    if (!meta.is_object())
      fail(path, "__metadata__ is not an object");
    for (const auto &[key, value] : meta.items()) {
      if (!value.is_string())
        fail(path, "__metadata__ '" + key + "' is not a string");
      (*metadata)[key] = value.get<std::string>();
    }
  }
  std::sort(entries.begin(), entries.end(),
            [](const Entry &a, const Entry &b) { return a.begin < b.begin; });
  uint64_t dataSize = bytes.size() - 8 - headerSize, expected = 0;
  for (const Entry &e : entries) {
    if (e.begin != expected)
      fail(path, "tensor '" + e.name + "': data_offsets begin at " + std::to_string(e.begin) +
                     ", expected " + std::to_string(expected) + " (gap or overlap)");
    if (e.end > dataSize)
      fail(path, "tensor '" + e.name + "': data_offsets end at " + std::to_string(e.end) +
                     " past the data (" + std::to_string(dataSize) + " bytes)");
    expected = e.end;
  }
  if (expected != dataSize)
    fail(path,
         "the data has " + std::to_string(dataSize - expected) + " bytes after the last tensor");
  std::map<std::string, TensorData> tensors;
  const char *data = bytes.data() + 8 + headerSize;
  for (const Entry &e : entries) {
    TensorData t{e.shape, std::vector<float>((e.end - e.begin) / 4)};
    std::memcpy(t.values.data(), data + e.begin, e.end - e.begin); // little-endian hosts only
    tensors.emplace(e.name, std::move(t));
  }
  return tensors;
}

namespace {

/// "tensor 'NAME' holds NaN at element I" for the first value of `values`
/// that is not finite, or "".
std::string nonFinite(const std::string &name, const std::vector<float> &values) {
  auto bad = std::find_if(values.begin(), values.end(), [](float v) { return !std::isfinite(v); });
  if (bad == values.end())
    return "";
  return "tensor '" + name + "' holds " + (std::isnan(*bad) ? "NaN" : "an infinity") +
         " at element " + std::to_string(bad - values.begin());
}

/// The safetensors bytes of `tensors`, in their order, and `metadata`.
std::string serialize(const std::vector<TensorView> &tensors,
                      const std::map<std::string, std::string> &metadata) {
  json header = json::object();
  if (!metadata.empty())
    header["__metadata__"] = metadata;
  uint64_t offset = 0;
  for (const TensorView &t : tensors) {
    uint64_t bytes = uint64_t(t.values->size()) * 4;
    header[t.name] = {
        {"dtype", "F32"}, {"shape", *t.shape}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' '); // data starts 8-byte aligned
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[size_t(i)] = char((uint64_t(text.size()) >> (8 * i)) & 0xff);
  out += text;
  for (const TensorView &t : tensors)
    out.append(reinterpret_cast<const char *>(t.values->data()), t.values->size() * 4);
  return out;
}

/// The file a save writes: a symbolic link is followed to the file it names
/// (saving replaces that file, and the link stays a link).
fs::path saveTarget(const std::string &path) {
  fs::path target = path;
  std::error_code error;
  for (int hops = 0; hops < 40 && fs::is_symlink(fs::symlink_status(target, error)); ++hops) {
    fs::path link = fs::read_symlink(target, error);
    target = link.is_absolute() ? link : target.parent_path() / link;
  }
  return target;
}

bool writeFile(const fs::path &path, const std::string &bytes, std::ios::openmode mode) {
  std::ofstream out(path, std::ios::binary | mode);
  out.write(bytes.data(), long(bytes.size()));
  out.flush();
  return bool(out);
}

/// The temporary file of the save in progress, removed if SIGINT, SIGTERM or
/// SIGHUP ends the process during the save (a SIGKILL leaves it; the next
/// save to the same path overwrites it).
char pendingTemp[4096];

void removePendingTemp(int signal) {
  ::unlink(pendingTemp);
  std::signal(signal, SIG_DFL);
  std::raise(signal);
}

/// Installs removePendingTemp for the signals that end a process politely,
/// and puts back the previous handlers when the save is over.
class PendingTemp {
public:
  explicit PendingTemp(const std::string &path) {
    std::snprintf(pendingTemp, sizeof pendingTemp, "%s", path.c_str());
    for (size_t i = 0; i < kSignals.size(); ++i)
      previous_[i] = std::signal(kSignals[i], removePendingTemp);
  }
  ~PendingTemp() {
    for (size_t i = 0; i < kSignals.size(); ++i)
      std::signal(kSignals[i], previous_[i]);
  }
  PendingTemp(const PendingTemp &) = delete;
  PendingTemp &operator=(const PendingTemp &) = delete;

private:
  static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
  std::array<void (*)(int), 3> previous_{};
};

} // namespace

std::vector<TensorView> paramViews(const ParamStore &params) {
  std::vector<TensorView> views;
  for (int id = 0; id < params.count(); ++id)
    views.push_back({params.at(id).name, &params.at(id).shape, &params.at(id).value});
  return views;
}

void saveParams(const ParamStore &params, const std::string &path) {
  saveTensors(paramViews(params), {}, path);
}

void saveTensors(const std::vector<TensorView> &tensors,
                 const std::map<std::string, std::string> &metadata, const std::string &path) {
  for (const TensorView &t : tensors)
    if (std::string what = nonFinite(t.name, *t.values); !what.empty())
      fail(path, what + ": not saved, the previous file is unchanged");
  std::string bytes = serialize(tensors, metadata);
  fs::path target = saveTarget(path);
  std::error_code error;
  fs::file_status status = fs::status(target, error);
  if (fs::exists(status) && !fs::is_regular_file(status)) {
    // A device or a pipe is written to, never replaced.
    if (!writeFile(target, bytes, std::ios::out))
      fail(path, "write failed");
    return;
  }
  std::string tmp = target.string() + ".tmp";
  PendingTemp pending(tmp);
  if (!writeFile(tmp, bytes, std::ios::out | std::ios::trunc)) {
    std::remove(tmp.c_str());
    fail(tmp, "cannot write; the previous file is unchanged");
  }
  if (std::rename(tmp.c_str(), target.c_str()) != 0) {
    std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    fail(path, "cannot replace: " + why + "; the previous file is unchanged");
  }
}

void loadParams(ParamStore &params, const std::string &path) {
  std::map<std::string, TensorData> tensors = readSafetensors(path);
  assignParams(params, std::move(tensors), path);
}

/// The tensor of `tensors` that looks like parameter `p` under an older
/// name: the only one the model does not have with p's shape and the last
/// part of p's name (`fwd_cell.W` for `fwd.W`, after a copied cell became a
/// layer instance); empty when there is none or more than one.
static std::string renamedFrom(const Param &p, const std::map<std::string, TensorData> &tensors,
                               const ParamStore &params) {
  auto lastPart = [](const std::string &name) { return name.substr(name.rfind('.') + 1); };
  std::string found;
  for (const auto &[name, t] : tensors)
    if (params.find(name) < 0 && t.shape == p.shape && lastPart(name) == lastPart(p.name)) {
      if (!found.empty())
        return "";
      found = name;
    }
  return found;
}

void assignParams(ParamStore &params, std::map<std::string, TensorData> tensors,
                  const std::string &path) {
  std::vector<std::string> problems;
  for (int id = 0; id < params.count(); ++id) {
    const Param &p = params.at(id);
    auto it = tensors.find(p.name);
    if (it == tensors.end()) {
      std::string old = renamedFrom(p, tensors, params);
      problems.push_back("missing tensor '" + p.name + "' " + shapeText(p.shape) +
                         (old.empty() ? ""
                                      : " (the file has '" + old +
                                            "' of that shape: saved before a rename? its name "
                                            "is now '" +
                                            p.name + "')"));
    } else if (it->second.shape != p.shape)
      problems.push_back("tensor '" + p.name + "' has shape " + shapeText(it->second.shape) +
                         ", expected " + shapeText(p.shape));
  }
  for (const auto &[name, t] : tensors)
    if (params.find(name) < 0)
      problems.push_back("unexpected tensor '" + name + "' " + shapeText(t.shape));
  if (!problems.empty()) {
    std::string message;
    for (const std::string &p : problems)
      message += (message.empty() ? "" : "; ") + p;
    fail(path, message);
  }
  for (const auto &[name, t] : tensors)
    if (std::string what = nonFinite(name, t.values); !what.empty())
      fail(path, what + " (a diverged training run?)");
  for (int id = 0; id < params.count(); ++id)
    params.at(id).value = std::move(tensors.at(params.at(id).name).values);
}

PartialLoad initFromTensors(ParamStore &params, const std::string &path) {
  std::map<std::string, TensorData> tensors = readSafetensors(path);
  PartialLoad load;
  std::string problems;
  for (const auto &[name, t] : tensors) {
    int id = params.find(name);
    if (id < 0) {
      load.ignored.push_back(name);
      continue;
    }
    std::string what;
    if (t.shape != params.at(id).shape)
      what = "tensor '" + name + "' has shape " + shapeText(t.shape) + ", the model's is " +
             shapeText(params.at(id).shape);
    else
      what = nonFinite(name, t.values);
    if (!what.empty())
      problems += (problems.empty() ? "" : "; ") + what;
  }
  if (!problems.empty())
    fail(path, problems);
  for (int id = 0; id < params.count(); ++id) {
    Param &p = params.at(id);
    auto it = tensors.find(p.name);
    if (it == tensors.end()) {
      load.kept.push_back(p.name);
      if (std::string old = renamedFrom(p, tensors, params); !old.empty())
        load.renamed.push_back({old, p.name});
      continue;
    }
    p.value = std::move(it->second.values);
    load.loaded.push_back(p.name);
  }
  return load;
}

} // namespace foldc::rt
