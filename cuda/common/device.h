// CUDA device discovery for the engine. Device code and its launchers include only CUDA and
// standard headers (docs/architecture.md: no Abseil or fmt under cuda/).
#pragma once

#include <cstdint>

namespace bw24::cuda {

// Number of usable CUDA devices; 0 when there is no driver or no device (never throws or aborts,
// so libbw24.so loads and answers on machines without NVIDIA hardware).
int device_count();

// Name and compute capability of a device; false if the ordinal is invalid.
bool device_properties(int ordinal, char* name, int name_cap, int* cc_major, int* cc_minor,
                       unsigned long long* total_bytes);

// The device-to-device copy bandwidth the speed rows are compared with: median of 5 copies of
// 2 GiB, counting bytes read plus bytes written (gates.md §2). 0 if it cannot be measured.
double copy_bandwidth_gbs(int ordinal);

// SMs of the current device (cached; 132, the H200's, if the query fails). Launchers size
// persistent grids with it.
int sm_count();

// An SM of the current device (cached per ordinal < 64; the H200's where a query fails): the shared
// memory its CTAs share (228 KB on sm_90, 1 KB more than one CTA may take), the driver's part of it
// for each resident CTA (1 KB), and its registers (64 K).
struct SmLimits {
  int64_t smem = 228 * 1024, smem_reserved_per_cta = 1024, regs = 64 * 1024;
};
SmLimits sm_limits();

// What one CTA of a launch holds on an SM: shared memory (dynamic, static and the driver's 1 KB)
// and registers (a thread's, in the allocation unit of 8, times its threads). launch.cuh's cta_room
// measures it for a kernel.
struct CtaRoom {
  int64_t smem = 0, regs = 0;
};

}  // namespace bw24::cuda
