#include "lib/arch/registry.h"

#include <string_view>

#include "lib/core/status.h"

namespace bw24::arch {
namespace {

struct Entry {
  std::string_view name;
  absl::StatusOr<ModelGraph> (*build)(const loaders::TensorDirectory&);
};

constexpr Entry kArchs[] = {
    {"llama", build_llama},
    {"qwen3", build_qwen3},
    {"qwen3moe", build_qwen3moe},
    {"qwen35", build_qwen35},
    {"qwen35moe", build_qwen35moe},
    {"qwen3next", build_qwen3next},
    {"gemma3", build_gemma3},
};

}  // namespace

absl::StatusOr<ModelGraph> build_graph(const loaders::TensorDirectory& dir) {
  const loaders::MetaValue* a = dir.meta("general.architecture");
  if (!a || a->type != loaders::MetaType::STRING)
    return error(Code::kModel, "the model has no general.architecture string");
  std::string supported;
  for (const Entry& e : kArchs) {
    if (e.name == a->s) return e.build(dir);
    supported += supported.empty() ? "" : ", ";
    supported += e.name;
  }
  return error(Code::kUnsupported, "unknown architecture '{}' (supported: {})", a->s, supported);
}

}  // namespace bw24::arch
