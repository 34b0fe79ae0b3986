// Pretrained word vectors (GloVe or word2vec text files) into an embedding.
#pragma once

#include "runtime/engine/Params.h"

#include <cstddef>
#include <string>

namespace foldc::rt {

/// What loadVectors put into the table.
struct VectorsReport {
  size_t vocabulary = 0; ///< words in the vocabulary file
  size_t found = 0;      ///< of those, the words the vectors file has
};

/// Sets row i of the embedding table `table` to the vector of word i of
/// `vocabularyFile` (one word per line: line 1 is id 0) as read from
/// `vectorsFile`: one word per line followed by as many numbers as the table
/// is wide, separated by spaces (GloVe's format; word2vec's text format, whose
/// first line is `COUNT WIDTH`, too). Rows whose word the file lacks keep
/// their values. A word may hold spaces (GloVe 840B has some): the numbers
/// are the line's last fields.
///
/// All or nothing: a malformed line, a vector of another width, a word listed
/// twice (in either file), or more vocabulary words than table rows throws
/// DataError as `FILE:LINE: what`, leaving the table untouched.
VectorsReport loadVectors(Param &table, const std::string &vectorsFile,
                          const std::string &vocabularyFile);

} // namespace foldc::rt
