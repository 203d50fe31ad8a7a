#include "lib/kv/kv_cache.h"

#include <new>

#include "lib/core/dtype.h"
#include "lib/core/status.h"
#include "lib/quant/traits.h"

namespace bw24::kv {
namespace {

// The ggml type whose reference quantizer / dequantizer stores a head row (fp8 has none: own codec).
GgmlType ggml_type(KvType t) {
  switch (t) {
    case KvType::kF32: return GgmlType::F32;
    case KvType::kF16: return GgmlType::F16;
    case KvType::kBF16: return GgmlType::BF16;
    case KvType::kQ8_0: return GgmlType::Q8_0;
    case KvType::kQ4_0: return GgmlType::Q4_0;
    case KvType::kFp8E4M3: break;
  }
  return GgmlType::F32;  // unused for fp8
}

uint64_t head_bytes(KvType t, int32_t head_dim) {
  if (t == KvType::kFp8E4M3) return static_cast<uint64_t>(head_dim);
  return quant::row_bytes(*type_info(ggml_type(t)), head_dim);
}

void put(uint8_t* dst, const float* src, int32_t n, KvType t) {
  if (t == KvType::kFp8E4M3) {
    for (int32_t i = 0; i < n; ++i) dst[i] = f32_to_fp8_e4m3(src[i]);
    return;
  }
  quant::traits(ggml_type(t))->quantize(src, dst, n);
}

void get(float* dst, const uint8_t* src, int32_t n, KvType t) {
  if (t == KvType::kFp8E4M3) {
    for (int32_t i = 0; i < n; ++i) dst[i] = fp8_e4m3_to_f32(src[i]);
    return;
  }
  quant::traits(ggml_type(t))->dequant(src, dst, n);
}

}  // namespace

std::string_view kv_type_name(KvType t) {
  switch (t) {
    case KvType::kF32: return "f32";
    case KvType::kF16: return "f16";
    case KvType::kBF16: return "bf16";
    case KvType::kQ8_0: return "q8_0";
    case KvType::kQ4_0: return "q4_0";
    case KvType::kFp8E4M3: return "fp8_e4m3";
  }
  return "?";
}

absl::StatusOr<HostKvCache> HostKvCache::create(const KvShape& s, KvType k_type, KvType v_type) {
  for (KvType t : {k_type, v_type}) {
    const bool blocks = t == KvType::kQ8_0 || t == KvType::kQ4_0;
    if (blocks && s.head_dim % 32 != 0)
      return error(Code::kUnsupported, "a {} KV cache needs head_dim to be a multiple of 32 (it is {})",
                   kv_type_name(t), s.head_dim);
  }
  HostKvCache c;
  c.shape_ = s;
  c.k_type_ = k_type;
  c.v_type_ = v_type;
  c.k_head_bytes_ = head_bytes(k_type, s.head_dim);
  c.v_head_bytes_ = head_bytes(v_type, s.head_dim);
  const uint64_t rows = uint64_t(s.n_layer) * s.n_ctx * s.n_head_kv;
  try {
    c.k_.resize(rows * c.k_head_bytes_);
    c.v_.resize(rows * c.v_head_bytes_);
  } catch (const std::bad_alloc&) {
    return error(Code::kOutOfMemory, "cannot allocate a KV cache of {} MiB for {} positions",
                 (rows * (c.k_head_bytes_ + c.v_head_bytes_)) >> 20, s.n_ctx);
  }
  return c;
}

void HostKvCache::store(int32_t layer, int64_t pos, const float* k, const float* v) {
  const uint64_t row0 = (uint64_t(layer) * shape_.n_ctx + pos) * shape_.n_head_kv;  // first head row
  for (int32_t h = 0; h < shape_.n_head_kv; ++h) {
    put(k_.data() + (row0 + h) * k_head_bytes_, k + int64_t{h} * shape_.head_dim, shape_.head_dim, k_type_);
    put(v_.data() + (row0 + h) * v_head_bytes_, v + int64_t{h} * shape_.head_dim, shape_.head_dim, v_type_);
  }
}

void HostKvCache::gather(int32_t layer, int32_t kv_head, int64_t first, int64_t last, float* k_out,
                         float* v_out) const {
  for (int64_t p = first; p <= last; ++p) {
    const uint64_t row = (uint64_t(layer) * shape_.n_ctx + p) * shape_.n_head_kv + kv_head;
    get(k_out + (p - first) * shape_.head_dim, k_.data() + row * k_head_bytes_, shape_.head_dim, k_type_);
    get(v_out + (p - first) * shape_.head_dim, v_.data() + row * v_head_bytes_, shape_.head_dim, v_type_);
  }
}

}  // namespace bw24::kv
