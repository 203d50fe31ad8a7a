// The device half of StepNext (cuda/sampling/sampling.cuh): stored by the thread that stores a
// step's token choice.
#pragma once

#include "cuda/sampling/sampling.cuh"

namespace bw24::cuda {

__device__ __forceinline__ void store_step_next(const StepNext& next, int32_t choice) {
  if (next.host_choice) *next.host_choice = choice;
  if (!next.pos) return;
  *next.pos = next.pos_value;
  bool stop = false;
  for (int i = 0; i < next.n_stops; ++i) stop = stop || next.stops[i] == choice;
  *next.hold = stop ? 1 : 0;
}

}  // namespace bw24::cuda
