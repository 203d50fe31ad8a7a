// Token sampling on the host. The chain, in order: penalties (repetition, presence, frequency over
// the last penalty_last_n tokens) -> greedy if temperature <= 0 -> top-k -> temperature ->
// softmax -> top-p -> min-p -> draw. The RNG is the session's, so a seed reproduces a run.
#pragma once

#include <cstdint>
#include <random>
#include <vector>

namespace bw24::sampling {

struct Params {
  float temperature = 0.0f;
  int32_t top_k = 0;
  float top_p = 1.0f;
  float min_p = 0.0f;
  float repeat_penalty = 1.0f;
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  int32_t penalty_last_n = 64;  // -1 = all history

  bool penalized() const { return repeat_penalty != 1.0f || presence_penalty != 0.0f || frequency_penalty != 0.0f; }
  // Sampling is then exactly argmax of the logits (what a device may do on its own).
  bool plain_greedy() const { return temperature <= 0.0f && !penalized(); }
};

class Sampler {
 public:
  explicit Sampler(uint64_t seed) : rng_(seed) {}
  void reseed(uint64_t seed) { rng_.seed(seed); }

  // history: the tokens in the context so far (for penalties).
  int32_t sample(const float* logits, int32_t n_vocab, const Params& p,
                 const std::vector<int32_t>& history);
  // The uniform draw sample() would take next, for a device that samples the same way
  // (cuda::sample_top_k): one per sampled token, so the stream stays the host's.
  double draw() { return uniform(); }
  // The RNG state, to take a draw back (a device choice that was never used).
  const std::mt19937_64& rng() const { return rng_; }
  void set_rng(const std::mt19937_64& r) { rng_ = r; }
  // Whether a device sampler (cuda::sample_top_k) takes p: temperature > 0, no penalties, top_k in
  // [1, max_top_k].
  static bool device_sampleable(const Params& p, int32_t max_top_k) {
    return p.temperature > 0.0f && !p.penalized() && p.top_k >= 1 && p.top_k <= max_top_k;
  }

 private:
  double uniform();  // [0, 1), 53 random bits; identical on every platform
  std::mt19937_64 rng_;
  std::vector<float> work_;
  std::vector<int32_t> ids_;
};

// argmax with the lowest index winning ties.
int32_t argmax(const float* x, int32_t n);

// The sampler's chain after penalties and greedy (top-k -> temperature -> softmax -> top-p ->
// min-p -> draw) with the uniform draw u given: what Sampler::sample does with its own draw, and
// what cuda::sample_top_k computes on a device. ids: scratch.
int32_t sample_with_draw(const float* logits, int32_t n_vocab, const Params& p, double u, std::vector<int32_t>& ids);

}  // namespace bw24::sampling
