#include "lib/sampling/sampler.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <unordered_map>

namespace bw24::sampling {

int32_t argmax(const float* x, int32_t n) {
  int32_t best = 0;
  for (int32_t i = 1; i < n; ++i)
    if (x[i] > x[best]) best = i;
  return best;
}

double Sampler::uniform() { return static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0); }

int32_t Sampler::sample(const float* logits, int32_t n_vocab, const Params& p,
                        const std::vector<int32_t>& history) {
  work_.assign(logits, logits + n_vocab);
  float* l = work_.data();

  if (p.penalized() && !history.empty()) {
    size_t n = history.size();
    size_t window = p.penalty_last_n < 0 ? n : std::min<size_t>(n, static_cast<size_t>(p.penalty_last_n));
    std::unordered_map<int32_t, int32_t> counts;
    for (size_t i = n - window; i < n; ++i) ++counts[history[i]];
    for (auto [tok, cnt] : counts) {
      if (tok < 0 || tok >= n_vocab) continue;
      float& v = l[tok];
      v = v > 0 ? v / p.repeat_penalty : v * p.repeat_penalty;
      v -= static_cast<float>(cnt) * p.frequency_penalty + p.presence_penalty;
    }
  }
  if (p.temperature <= 0.0f) return argmax(l, n_vocab);

  return sample_with_draw(l, n_vocab, p, uniform(), ids_);
}

int32_t sample_with_draw(const float* l, int32_t n_vocab, const Params& p, double u, std::vector<int32_t>& ids) {
  // Candidates sorted by logit, descending (ties by id for determinism).
  ids.resize(n_vocab);
  std::iota(ids.begin(), ids.end(), 0);
  auto by_logit = [l](int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); };
  size_t keep = static_cast<size_t>(n_vocab);
  if (p.top_k > 0 && static_cast<size_t>(p.top_k) < keep) {
    keep = static_cast<size_t>(p.top_k);
    std::partial_sort(ids.begin(), ids.begin() + keep, ids.end(), by_logit);
  } else {
    std::sort(ids.begin(), ids.end(), by_logit);
  }
  ids.resize(keep);

  std::vector<double> prob(keep);
  double mx = l[ids[0]] / p.temperature, sum = 0;
  for (size_t i = 0; i < keep; ++i) sum += prob[i] = std::exp(l[ids[i]] / p.temperature - mx);
  for (double& q : prob) q /= sum;

  if (p.top_p < 1.0f) {
    double cum = 0;
    size_t cut = keep;
    for (size_t i = 0; i < keep; ++i) {
      cum += prob[i];
      if (cum >= p.top_p) {
        cut = i + 1;
        break;
      }
    }
    keep = cut;
  }
  if (p.min_p > 0.0f) {
    double floor = prob[0] * p.min_p;
    size_t cut = 1;
    while (cut < keep && prob[cut] >= floor) ++cut;
    keep = cut;
  }
  double total = 0;
  for (size_t i = 0; i < keep; ++i) total += prob[i];
  double r = u * total, acc = 0;
  for (size_t i = 0; i < keep; ++i) {
    acc += prob[i];
    if (r < acc) return ids[i];
  }
  return ids[keep - 1];
}

}  // namespace bw24::sampling
