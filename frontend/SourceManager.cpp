// Loading source files and finding their lines.
#include "frontend/SourceManager.h"

#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>

namespace foldc {

SourceFile::SourceFile(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
  lineStarts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n')
      lineStarts_.push_back(i + 1);
}

std::string_view SourceFile::line(uint32_t line) const {
  if (line == 0 || line > lineStarts_.size())
    return {};
  size_t start = lineStarts_[line - 1];
  size_t end = line < lineStarts_.size() ? lineStarts_[line] - 1 : text_.size();
  std::string_view view(text_);
  view = view.substr(start, end - start);
  if (!view.empty() && view.back() == '\r')
    view.remove_suffix(1);
  return view;
}

uint32_t SourceManager::addFile(std::string name, std::string text) {
  files_.push_back(std::make_unique<SourceFile>(std::move(name), std::move(text)));
  return static_cast<uint32_t>(files_.size() - 1);
}

bool SourceManager::loadFile(const std::string &path, uint32_t &fileIndex) {
  std::ostringstream contents;
  if (path == "-") {
    contents << std::cin.rdbuf();
    fileIndex = addFile("<stdin>", contents.str());
    return true;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return false;
  contents << in.rdbuf();
  fileIndex = addFile(path, contents.str());
  return true;
}

} // namespace foldc
