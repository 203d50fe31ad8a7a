// Host KV cache of the CPU reference backend: one contiguous [layer][pos][kv_head][head_dim]
// array each for K and V, stored as f32 or f16 (chosen independently). Rewind is free: positions
// past the session's position are simply overwritten later.
#pragma once

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"

namespace bw24::kv {

enum class KvType : int32_t { kF32 = 0, kF16 = 1 };

struct KvShape {
  int32_t n_layer = 0, n_ctx = 0, n_head_kv = 0, head_dim = 0;
};

class HostKvCache {
 public:
  static absl::StatusOr<HostKvCache> create(const KvShape& shape, KvType k_type, KvType v_type);

  // Store one position's K and V rows (n_head_kv * head_dim floats each).
  void store(int32_t layer, int64_t pos, const float* k, const float* v);
  // Copy positions [first, last] of one kv head as f32 rows of head_dim into k_out / v_out.
  void gather(int32_t layer, int32_t kv_head, int64_t first, int64_t last, float* k_out,
              float* v_out) const;
  uint64_t bytes() const { return k_.size() + v_.size(); }
  const KvShape& shape() const { return shape_; }

 private:
  KvShape shape_;
  KvType k_type_ = KvType::kF32, v_type_ = KvType::kF32;
  std::vector<uint8_t> k_, v_;
};

}  // namespace bw24::kv
