// One entry point for every model source: a .gguf file or a Hugging Face directory.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "loaders/common/tensor_directory.h"

namespace bw24::loaders {

absl::StatusOr<std::unique_ptr<TensorDirectory>> open_model_source(const std::string& path);

}  // namespace bw24::loaders
