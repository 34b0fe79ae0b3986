// The parameters a command starts from (see InitialParams.h).
#include "runtime/driver/InitialParams.h"

#include "runtime/io/Safetensors.h"
#include "runtime/io/Vectors.h"
#include "runtime/parallel/DataParallel.h"

#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace foldc::rt {

namespace {

/// "a, b, c", or "none".
std::string listed(const std::vector<std::string> &names) {
  std::string text;
  for (const std::string &n : names)
    text += (text.empty() ? "" : ", ") + n;
  return names.empty() ? std::string("none") : text;
}

/// --init-from: the parameters a file holds, over the initialised ones. A
/// file that sets none of them is a mistake (another model's file), not a
/// warm start.
void initFrom(Session &session, const std::string &file) {
  PartialLoad load = initFromTensors(session.model.params(), file);
  if (load.loaded.empty()) {
    std::vector<std::string> model;
    for (int id = 0; id < session.model.params().count(); ++id)
      model.push_back(session.model.params().at(id).name);
    std::string hint;
    for (const auto &[old, now] : load.renamed)
      hint += "; '" + old + "' looks like '" + now + "' under an older name";
    throw std::runtime_error(file + ": --init-from set no parameter: none of its tensors (" +
                             listed(load.ignored) + ") is one of the model's (" + listed(model) +
                             ")" + hint);
  }
  if (!session.leader())
    return;
  std::cerr << file << ": loaded " << load.loaded.size() << " of " << session.model.params().count()
            << " parameters (" << listed(load.loaded)
            << "); initialised from --seed: " << listed(load.kept) << "\n";
  if (!load.ignored.empty())
    std::cerr << file << ": not in the model, ignored: " << listed(load.ignored) << "\n";
  for (const auto &[old, now] : load.renamed)
    std::cerr << file << ": '" << old << "' looks like '" << now
              << "' under an older name (same shape); rename it in the file to load it\n";
}

/// " (its embeddings: a, b)", or " (it has none)".
std::string embeddingNames(const ParamStore &params) {
  std::string names;
  for (int id = 0; id < params.count(); ++id)
    if (params.at(id).sparseRows) {
      const std::string &name = params.at(id).name;
      names += (names.empty() ? "" : ", ") + name.substr(0, name.rfind('.'));
    }
  return names.empty() ? " (it has none)" : " (its embeddings: " + names + ")";
}

/// --vectors LAYER=FILE with --vocab LAYER=FILE: pretrained rows of an
/// embedding (CommandLine paired them).
void loadPretrainedVectors(Session &session) {
  const DriverOptions &options = session.options;
  ParamStore &params = session.model.params();
  for (const std::string &assignment : options.vectors) {
    auto [layer, vectorsFile] = splitAssignment(assignment);
    std::string vocabFile;
    for (const std::string &v : options.vocab)
      if (splitAssignment(v).first == layer)
        vocabFile = splitAssignment(v).second;
    int id = params.find(layer + ".E");
    if (id < 0 || !params.at(id).sparseRows)
      throw std::runtime_error("--vectors " + assignment + ": the model has no embedding '" +
                               layer + "'" + embeddingNames(params));
    VectorsReport report = loadVectors(params.at(id), vectorsFile, vocabFile);
    if (session.leader())
      std::cerr << vectorsFile << ": " << report.found << " of the " << report.vocabulary
                << " words of " << vocabFile << " found; the others keep the initialiser of '"
                << layer << "'\n";
  }
}

} // namespace

void startParams(Session &session, bool shared) {
  const DriverOptions &options = session.options;
  if (options.params.empty())
    session.model.init(options.seed);
  else
    session.model.loadParams(options.params);
  if (!options.initFrom.empty())
    initFrom(session, options.initFrom);
  loadPretrainedVectors(session);
  if (shared && session.processes.size() > 1)
    broadcastParams(session.model.params(), session.processes);
}

} // namespace foldc::rt
