// Writes a TensorDirectory as a GGUF v3 file (the inverse of gguf.cpp): metadata in directory
// order, tensors in directory order, data aligned to general.alignment (32 unless the directory
// says otherwise). Used by bw24-synth so llama.cpp can run the same bytes bw24-bench measures.
#pragma once

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "loaders/common/tensor_directory.h"

namespace bw24::loaders {

// progress(f) may abort by returning an error. Writes to path + ".tmp", then renames.
absl::Status write_gguf(const TensorDirectory& dir, const std::string& path,
                        const std::function<absl::Status(float)>& progress = {});

}  // namespace bw24::loaders
