// The device half of StepNext (cuda/sampling/sampling.cuh): stored by the thread that stores a
// step's token choice.
#pragma once

#include "cuda/sampling/sampling.cuh"

namespace bw24::cuda {

__device__ __forceinline__ void store_step_next(const StepNext& next, int32_t choice) {
  if (next.host_choice) *next.host_choice = choice;
  if (!next.pos) return;
  *next.pos = next.pos_value;
  // Unrolled with constant indices: a loop to n_stops indexed the parameter array at run time, for
  // which the compiler copied StepNext to a 104-byte stack frame (ptxas -v) and read it back from
  // local memory (bw24-microbench argmax: the stores cost 0.8-0.9 us, next252).
  bool stop = false;
#pragma unroll
  for (int i = 0; i < kStepMaxStops; ++i) stop = stop || (i < next.n_stops && next.stops[i] == choice);
  *next.hold = stop ? 1 : 0;
}

}  // namespace bw24::cuda
