// Host KV cache of the CPU reference backend: one contiguous [layer][pos][kv_head][head_dim]
// array each for K and V, each in its own type (BW24_KV_*): f32, f16, bf16, q8_0, q4_0 (blocks of
// 32 within each head row, as ggml quantizes them) or fp8 e4m3 (saturating). A value is rounded
// once, when it is stored; every reader sees the same rounded row. Rewind is free: positions past
// the session's position are simply overwritten later.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace bw24::kv {

// Values are the BW24_KV_* codes.
enum class KvType : int32_t { kF32 = 0, kF16 = 1, kBF16 = 2, kQ8_0 = 3, kQ4_0 = 4, kFp8E4M3 = 5 };
std::string_view kv_type_name(KvType t);

struct KvShape {
  int32_t n_layer = 0, n_ctx = 0, n_head_kv = 0, head_dim = 0;
};

class HostKvCache {
 public:
  // Fails with kUnsupported when a block type (q8_0, q4_0) does not divide head_dim.
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
  uint64_t k_head_bytes_ = 0, v_head_bytes_ = 0;  // one head row of head_dim values
  std::vector<uint8_t> k_, v_;
};

}  // namespace bw24::kv
