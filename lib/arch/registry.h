// Architecture registry: general.architecture -> the arch file that builds its ModelGraph.
#pragma once

#include "absl/status/statusor.h"
#include "lib/arch/graph.h"

namespace bw24::arch {

absl::StatusOr<ModelGraph> build_graph(const loaders::TensorDirectory& dir);

// The arch files (one per architecture, each a short composition of blocks).
absl::StatusOr<ModelGraph> build_llama(const loaders::TensorDirectory& dir);
absl::StatusOr<ModelGraph> build_qwen3(const loaders::TensorDirectory& dir);
absl::StatusOr<ModelGraph> build_qwen3moe(const loaders::TensorDirectory& dir);
absl::StatusOr<ModelGraph> build_qwen35(const loaders::TensorDirectory& dir);
absl::StatusOr<ModelGraph> build_qwen35moe(const loaders::TensorDirectory& dir);
absl::StatusOr<ModelGraph> build_qwen3next(const loaders::TensorDirectory& dir);
absl::StatusOr<ModelGraph> build_gemma3(const loaders::TensorDirectory& dir);

}  // namespace bw24::arch
