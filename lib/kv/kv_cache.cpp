#include "lib/kv/kv_cache.h"

#include <cstring>
#include <new>

#include "lib/core/dtype.h"
#include "lib/core/status.h"

namespace bw24::kv {
namespace {

size_t elem_bytes(KvType t) { return t == KvType::kF32 ? 4 : 2; }

void put(uint8_t* dst, const float* src, int64_t n, KvType t) {
  if (t == KvType::kF32) {
    std::memcpy(dst, src, static_cast<size_t>(n) * 4);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h = f32_to_fp16(src[i]);
    std::memcpy(dst + 2 * i, &h, 2);
  }
}

void get(float* dst, const uint8_t* src, int64_t n, KvType t) {
  if (t == KvType::kF32) {
    std::memcpy(dst, src, static_cast<size_t>(n) * 4);
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    uint16_t h;
    std::memcpy(&h, src + 2 * i, 2);
    dst[i] = fp16_to_f32(h);
  }
}

}  // namespace

absl::StatusOr<HostKvCache> HostKvCache::create(const KvShape& s, KvType k_type, KvType v_type) {
  HostKvCache c;
  c.shape_ = s;
  c.k_type_ = k_type;
  c.v_type_ = v_type;
  uint64_t per = uint64_t(s.n_layer) * s.n_ctx * s.n_head_kv * s.head_dim;
  try {
    c.k_.resize(per * elem_bytes(k_type));
    c.v_.resize(per * elem_bytes(v_type));
  } catch (const std::bad_alloc&) {
    return error(Code::kOutOfMemory, "cannot allocate a KV cache of {} MiB for {} positions",
                 (per * (elem_bytes(k_type) + elem_bytes(v_type))) >> 20, s.n_ctx);
  }
  return c;
}

void HostKvCache::store(int32_t layer, int64_t pos, const float* k, const float* v) {
  const int64_t row = int64_t{shape_.n_head_kv} * shape_.head_dim;
  const uint64_t idx = (uint64_t(layer) * shape_.n_ctx + pos) * row;
  put(k_.data() + idx * elem_bytes(k_type_), k, row, k_type_);
  put(v_.data() + idx * elem_bytes(v_type_), v, row, v_type_);
}

void HostKvCache::gather(int32_t layer, int32_t kv_head, int64_t first, int64_t last, float* k_out,
                         float* v_out) const {
  const int64_t row = int64_t{shape_.n_head_kv} * shape_.head_dim;
  for (int64_t p = first; p <= last; ++p) {
    const uint64_t idx = (uint64_t(layer) * shape_.n_ctx + p) * row + uint64_t(kv_head) * shape_.head_dim;
    get(k_out + (p - first) * shape_.head_dim, k_.data() + idx * elem_bytes(k_type_), shape_.head_dim, k_type_);
    get(v_out + (p - first) * shape_.head_dim, v_.data() + idx * elem_bytes(v_type_), shape_.head_dim, v_type_);
  }
}

}  // namespace bw24::kv
