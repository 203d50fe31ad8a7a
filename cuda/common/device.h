// CUDA device discovery for the engine. Device code and its launchers include only CUDA and
// standard headers (docs/architecture.md: no Abseil or fmt under cuda/).
#pragma once

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

}  // namespace bw24::cuda
