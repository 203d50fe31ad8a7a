// A tiny GGUF writer for tests: builds valid files (and deliberately broken ones) in memory.
#pragma once

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace bw24::test {

class GgufWriter {
 public:
  explicit GgufWriter(uint32_t version = 3, uint32_t alignment = 32) : version_(version), align_(alignment) {}

  void kv_u32(const std::string& k, uint32_t v) { key(k, 4); put(kv_, v); ++n_kv_; }
  void kv_i32(const std::string& k, int32_t v) { key(k, 5); put(kv_, v); ++n_kv_; }
  void kv_f32(const std::string& k, float v) { key(k, 6); put(kv_, v); ++n_kv_; }
  void kv_bool(const std::string& k, bool v) { key(k, 7); kv_.push_back(v ? 1 : 0); ++n_kv_; }
  void kv_str(const std::string& k, const std::string& v) { key(k, 8); str(kv_, v); ++n_kv_; }
  void kv_u64(const std::string& k, uint64_t v) { key(k, 10); put(kv_, v); ++n_kv_; }
  void kv_arr_str(const std::string& k, const std::vector<std::string>& v) {
    key(k, 9);
    put(kv_, uint32_t{8});
    put(kv_, uint64_t(v.size()));
    for (auto& s : v) str(kv_, s);
    ++n_kv_;
  }
  void kv_arr_f32(const std::string& k, const std::vector<float>& v) {
    key(k, 9);
    put(kv_, uint32_t{6});
    put(kv_, uint64_t(v.size()));
    for (float f : v) put(kv_, f);
    ++n_kv_;
  }
  // Raw bytes appended to the kv section (for hand-made broken values); counts as one kv.
  void kv_raw(const std::string& k, uint32_t type, const std::vector<uint8_t>& payload) {
    key(k, type);
    kv_.insert(kv_.end(), payload.begin(), payload.end());
    ++n_kv_;
  }

  // F32 tensor with ne = dims (ne[0] innermost); data size = product.
  void tensor_f32(const std::string& name, std::vector<uint64_t> dims, const std::vector<float>& data) {
    std::vector<uint8_t> bytes(data.size() * 4);
    std::memcpy(bytes.data(), data.data(), bytes.size());
    tensor(name, 0, std::move(dims), bytes);
  }
  void tensor(const std::string& name, uint32_t type, std::vector<uint64_t> dims,
              const std::vector<uint8_t>& bytes) {
    str(ti_, name);
    put(ti_, uint32_t(dims.size()));
    for (uint64_t d : dims) put(ti_, d);
    put(ti_, type);
    while (data_.size() % align_) data_.push_back(0);
    put(ti_, uint64_t(data_.size()));
    data_.insert(data_.end(), bytes.begin(), bytes.end());
    ++n_tensors_;
  }

  std::vector<uint8_t> bytes() const {
    std::vector<uint8_t> out;
    put(out, uint32_t{0x46554747});
    put(out, version_);
    put(out, n_tensors_);
    put(out, n_kv_);
    out.insert(out.end(), kv_.begin(), kv_.end());
    out.insert(out.end(), ti_.begin(), ti_.end());
    if (n_tensors_) {
      while (out.size() % align_) out.push_back(0);
      out.insert(out.end(), data_.begin(), data_.end());
    }
    return out;
  }

  void write(const std::string& path) const {
    auto b = bytes();
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
  }

  template <typename T>
  static void put(std::vector<uint8_t>& out, T v) {
    uint8_t b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    out.insert(out.end(), b, b + sizeof(T));
  }
  static void str(std::vector<uint8_t>& out, const std::string& s) {
    put(out, uint64_t(s.size()));
    out.insert(out.end(), s.begin(), s.end());
  }

 private:
  void key(const std::string& k, uint32_t type) {
    str(kv_, k);
    put(kv_, type);
  }
  uint32_t version_, align_;
  uint64_t n_kv_ = 0, n_tensors_ = 0;
  std::vector<uint8_t> kv_, ti_, data_;
};

// A complete tiny llama (random weights) for model-level tests; knobs to break it.
struct TinyLlama {
  std::string arch = "llama";
  int n_embd = 32, n_layer = 2, n_head = 4, n_head_kv = 2, n_ff = 64, n_vocab = 64;
  bool skip_ffn_down = false;    // missing tensor
  bool wrong_q_shape = false;    // attn_q with a wrong output dim
  uint32_t seed = 7;

  std::vector<uint8_t> bytes() const {
    GgufWriter w;
    w.kv_str("general.architecture", arch);
    w.kv_str("general.name", "tiny-llama");
    w.kv_u32(arch + ".context_length", 64);
    w.kv_u32(arch + ".embedding_length", n_embd);
    w.kv_u32(arch + ".block_count", n_layer);
    w.kv_u32(arch + ".feed_forward_length", n_ff);
    w.kv_u32(arch + ".attention.head_count", n_head);
    w.kv_u32(arch + ".attention.head_count_kv", n_head_kv);
    w.kv_f32(arch + ".attention.layer_norm_rms_epsilon", 1e-5f);
    w.kv_u32("tokenizer.ggml.eos_token_id", 2);
    uint32_t state = seed;
    auto rnd = [&](size_t n, float scale) {
      std::vector<float> v(n);
      for (auto& x : v) {
        state = state * 1664525u + 1013904223u;
        x = scale * ((state >> 8) / 16777216.0f - 0.5f);
      }
      return v;
    };
    auto u = [](int x) { return uint64_t(x); };
    const int hd = n_embd / n_head, kv = hd * n_head_kv;
    w.tensor_f32("token_embd.weight", {u(n_embd), u(n_vocab)}, rnd(size_t(n_embd) * n_vocab, 2.0f));
    w.tensor_f32("output_norm.weight", {u(n_embd)}, rnd(n_embd, 1.0f));
    w.tensor_f32("output.weight", {u(n_embd), u(n_vocab)}, rnd(size_t(n_embd) * n_vocab, 1.0f));
    for (int l = 0; l < n_layer; ++l) {
      std::string b = "blk." + std::to_string(l) + ".";
      w.tensor_f32(b + "attn_norm.weight", {u(n_embd)}, rnd(n_embd, 1.0f));
      int qo = wrong_q_shape ? n_embd + 1 : n_embd;
      w.tensor_f32(b + "attn_q.weight", {u(n_embd), u(qo)}, rnd(size_t(n_embd) * qo, 0.5f));
      w.tensor_f32(b + "attn_k.weight", {u(n_embd), u(kv)}, rnd(size_t(n_embd) * kv, 0.5f));
      w.tensor_f32(b + "attn_v.weight", {u(n_embd), u(kv)}, rnd(size_t(n_embd) * kv, 0.5f));
      w.tensor_f32(b + "attn_output.weight", {u(n_embd), u(n_embd)}, rnd(size_t(n_embd) * n_embd, 0.5f));
      w.tensor_f32(b + "ffn_norm.weight", {u(n_embd)}, rnd(n_embd, 1.0f));
      w.tensor_f32(b + "ffn_gate.weight", {u(n_embd), u(n_ff)}, rnd(size_t(n_embd) * n_ff, 0.5f));
      w.tensor_f32(b + "ffn_up.weight", {u(n_embd), u(n_ff)}, rnd(size_t(n_embd) * n_ff, 0.5f));
      if (!skip_ffn_down)
        w.tensor_f32(b + "ffn_down.weight", {u(n_ff), u(n_embd)}, rnd(size_t(n_embd) * n_ff, 0.5f));
    }
    return w.bytes();
  }
};

}  // namespace bw24::test
