// Host KV cache of the CPU reference backend: one contiguous [layer][pos][kv_head][head_dim]
// array each for K and V, each in its own type (BW24_KV_*): f32, f16, bf16, q8_0, q4_0 (blocks of
// 32 within each head row, as ggml quantizes them) or fp8 e4m3 (saturating). A value is rounded
// once, when it is stored; every reader sees the same rounded row. Rewind is free: positions past
// the session's position are simply overwritten later.
//
// Rotation (model option kv_rotate=1): a block type's scale is its block's largest |x|, so one
// outlier channel of a key (RoPE'd keys have a few) sets a coarse step for the other 31 values.
// An orthonormal Walsh-Hadamard matrix H spreads each row's energy over its block before the
// rounding: the cache stores quant(H x) and hands back H dequant(quant(H x)) (H = H^T = H^-1), so
// attention sees x up to a rounding that no longer follows one channel. Scores are unchanged by
// the basis (q . H y = H q . y), which is how a GPU kernel does the same thing: rotate q once
// instead of every key (llama.cpp rotates Q, K and V in its graph since 2026; K in blocks of the
// largest power of two dividing head_dim, V in blocks of 64). Measured on SmolLM2-135M with a q4_0
// cache, 256 teacher-forced tokens: docs/performance.md, "KV cache types against llama.cpp".
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace bw24::kv {

// Values are the BW24_KV_* codes.
enum class KvType : int32_t { kF32 = 0, kF16 = 1, kBF16 = 2, kQ8_0 = 3, kQ4_0 = 4, kFp8E4M3 = 5 };
std::string_view kv_type_name(KvType t);
// The type kv_type_name calls `name`, or nullopt.
std::optional<KvType> kv_type_from_name(std::string_view name);
// Bytes a cached element takes on average: 4, 2, 2, 34 / 32 (q8_0: a 2-byte scale a block of 32), 18 / 32, 1.
double kv_element_bytes(KvType t);

struct KvShape {
  int32_t n_layer = 0, n_ctx = 0, n_head_kv = 0, head_dim = 0;
};

// The Walsh-Hadamard block sizes of a rotated cache, per side (0 = that side is stored as is):
// only the block types (q8_0, q4_0) rotate, and only where head_dim is a multiple of 64; K in
// blocks of the largest power of two that divides head_dim, V in blocks of 64 (llama.cpp's sizes).
struct KvRotation {
  int32_t k = 0, v = 0;
  bool any() const { return k > 0 || v > 0; }
};
KvRotation kv_rotation(KvType k_type, KvType v_type, int32_t head_dim);

// x[0, n) <- H x in consecutive blocks of `block` (a power of two dividing n), H the orthonormal
// Sylvester-ordered Walsh-Hadamard matrix of that size (entries +-1 / sqrt(block)); applying it
// twice gives x back up to rounding.
void hadamard_rotate(float* x, int32_t n, int32_t block);

class HostKvCache {
 public:
  // Fails with kUnsupported when a block type (q8_0, q4_0) does not divide head_dim. rotate: store
  // the rows kv_rotation names in the rotated basis (the comment at the top).
  static absl::StatusOr<HostKvCache> create(const KvShape& shape, KvType k_type, KvType v_type, bool rotate = false);

  // Store one position's K and V rows (n_head_kv * head_dim floats each).
  void store(int32_t layer, int64_t pos, const float* k, const float* v);
  // Copy positions [first, last] of one kv head as f32 rows of head_dim into k_out / v_out.
  void gather(int32_t layer, int32_t kv_head, int64_t first, int64_t last, float* k_out,
              float* v_out) const;
  uint64_t bytes() const { return k_.size() + v_.size(); }
  const KvShape& shape() const { return shape_; }
  KvRotation rotation() const { return rot_; }

 private:
  KvShape shape_;
  KvType k_type_ = KvType::kF32, v_type_ = KvType::kF32;
  KvRotation rot_;
  std::vector<float> rot_row_;  // a head row being rotated before store() rounds it (head_dim floats when rotating)
  uint64_t k_head_bytes_ = 0, v_head_bytes_ = 0;  // one head row of head_dim values
  std::vector<uint8_t> k_, v_;
};

}  // namespace bw24::kv
