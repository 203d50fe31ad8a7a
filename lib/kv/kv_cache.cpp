#include "lib/kv/kv_cache.h"

#include <algorithm>
#include <cmath>
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

bool blocked(KvType t) { return t == KvType::kQ8_0 || t == KvType::kQ4_0; }

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

// A head row into the cache, rotated first where block > 0 (tmp: head_dim floats).
void put_row(uint8_t* dst, const float* src, int32_t n, KvType t, int32_t block, float* tmp) {
  if (block > 0) {
    std::copy(src, src + n, tmp);
    hadamard_rotate(tmp, n, block);
    src = tmp;
  }
  put(dst, src, n, t);
}

}  // namespace

KvRotation kv_rotation(KvType k_type, KvType v_type, int32_t head_dim) {
  KvRotation r;
  if (head_dim <= 0 || head_dim % 64 != 0) return r;
  if (blocked(k_type)) r.k = head_dim & -head_dim;  // the lowest set bit: the largest power of two dividing it
  if (blocked(v_type)) r.v = 64;
  return r;
}

void hadamard_rotate(float* x, int32_t n, int32_t block) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(block));
  for (int32_t b = 0; b < n; b += block) {
    float* y = x + b;
    // Sylvester's recursion H_2s = [[H_s, H_s], [H_s, -H_s]] as butterflies, stride 1 up to block / 2.
    for (int32_t s = 1; s < block; s *= 2)
      for (int32_t i = 0; i < block; i += 2 * s)
        for (int32_t j = i; j < i + s; ++j) {
          const float a = y[j], c = y[j + s];
          y[j] = a + c;
          y[j + s] = a - c;
        }
    for (int32_t j = 0; j < block; ++j) y[j] *= scale;
  }
}

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

std::optional<KvType> kv_type_from_name(std::string_view name) {
  for (KvType t : {KvType::kF32, KvType::kF16, KvType::kBF16, KvType::kQ8_0, KvType::kQ4_0, KvType::kFp8E4M3})
    if (name == kv_type_name(t)) return t;
  return std::nullopt;
}

double kv_element_bytes(KvType t) { return static_cast<double>(head_bytes(t, 32)) / 32; }

absl::StatusOr<HostKvCache> HostKvCache::create(const KvShape& s, KvType k_type, KvType v_type, bool rotate) {
  for (KvType t : {k_type, v_type}) {
    if (blocked(t) && s.head_dim % 32 != 0)
      return error(Code::kUnsupported, "a {} KV cache needs head_dim to be a multiple of 32 (it is {})",
                   kv_type_name(t), s.head_dim);
  }
  HostKvCache c;
  c.shape_ = s;
  c.k_type_ = k_type;
  c.v_type_ = v_type;
  if (rotate) c.rot_ = kv_rotation(k_type, v_type, s.head_dim);
  if (c.rot_.any()) c.rot_row_.resize(static_cast<size_t>(s.head_dim));
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
  const int32_t D = shape_.head_dim;
  for (int32_t h = 0; h < shape_.n_head_kv; ++h) {
    put_row(k_.data() + (row0 + h) * k_head_bytes_, k + int64_t{h} * D, D, k_type_, rot_.k, rot_row_.data());
    put_row(v_.data() + (row0 + h) * v_head_bytes_, v + int64_t{h} * D, D, v_type_, rot_.v, rot_row_.data());
  }
}

void HostKvCache::gather(int32_t layer, int32_t kv_head, int64_t first, int64_t last, float* k_out,
                         float* v_out) const {
  for (int64_t p = first; p <= last; ++p) {
    const uint64_t row = (uint64_t(layer) * shape_.n_ctx + p) * shape_.n_head_kv + kv_head;
    get(k_out + (p - first) * shape_.head_dim, k_.data() + row * k_head_bytes_, shape_.head_dim, k_type_);
    get(v_out + (p - first) * shape_.head_dim, v_.data() + row * v_head_bytes_, shape_.head_dim, v_type_);
    if (rot_.k) hadamard_rotate(k_out + (p - first) * shape_.head_dim, shape_.head_dim, rot_.k);  // back to x's basis
    if (rot_.v) hadamard_rotate(v_out + (p - first) * shape_.head_dim, shape_.head_dim, rot_.v);
  }
}

}  // namespace bw24::kv
