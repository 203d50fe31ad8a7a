#include "loaders/open.h"

#include <cstdio>
#include <filesystem>

#include "lib/core/status.h"
#include "loaders/gguf/gguf.h"
#include "loaders/safetensors/hf_model.h"

namespace bw24::loaders {

absl::StatusOr<std::unique_ptr<TensorDirectory>> open_model_source(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (path.empty()) return error(Code::kInvalidArgument, "empty model path");
  fs::file_status st = fs::status(path, ec);
  if (ec || !fs::exists(st)) return error(Code::kIo, "'{}' does not exist", path);
  if (fs::is_directory(st)) return load_hf_directory(path);
  if (fs::path(path).extension() == ".safetensors")
    return load_hf_directory(fs::absolute(fs::path(path)).parent_path().string());
  return load_gguf(path);
}

}  // namespace bw24::loaders
