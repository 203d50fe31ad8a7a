// Microbenchmark probe (bw24-microbench decode_chain): what a kernel boundary costs a decode step,
// measured on a stand-in for it, before anyone builds the persistent decode kernel that
// docs/performance.md (round 12) plans. Rounds 12-17 put the Qwen3-8B Q4_K_M step at ~2.2 ms
// against ~1.1 ms of weight bytes at the copy rate and blamed ~8 kernel boundaries a layer at
// ~1.5-2 us each; the plan's premise is that a grid-wide counter costs ~0.5 us where a boundary
// costs that much. This probe measures the premise with everything else held equal.
//
// The stand-in: the phases of one Qwen3-8B layer at Q4_K sizes (norm, Q/K/V 6144 x 2304 B, attention,
// O 4096 x 2304 B, norm, gate-up 24576 x 2304 B, down 4096 x 6912 B; tiny phases for the norms and
// attention), 36 layers, then lm_head 151936 x 3360 B (Q6_K): 4.42 GB, about the real step's 4.68.
// Every phase is the same warp-per-row int8 dot (16-byte loads, dp4a against the previous phase's
// output held in shared memory), so each phase depends on all of the one before it, as a layer does.
// The same device function runs in every mode:
//   kFloor       one launch, no dependencies (each phase reads a constant vector): the stream rate
//                of this code, the step's floor.
//   kChainPdl    one launch a phase (253), PDL, in a CUDA graph: today's engine's structure.
//   kChain       the same without PDL.
//   kPersistent* one cooperative launch; a grid-wide barrier between phases instead of a boundary,
//                three kinds (grid_barrier below).
// `empty`: every phase with no rows, so a step is 253 boundaries or barriers and the x reads alone.
// `ahead`: each warp loads its first row's first 6 x 16 bytes a lane of the next phase into
// registers before it waits (the boundary's PDL wait or the counter), the weights' independence
// that keys ahead used in flash decode (round 17). The modes compute the same integers; the
// benchmark compares the last phase's output of every mode with kChain's.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "cuda/common/device.h"
#include "cuda/common/launch.cuh"

namespace bw24::bench {
using namespace bw24::cuda;

enum ChainMode {
  kFloor = 0,
  kChainPdl = 1,
  kChain = 2,
  kPersistentCounter = 3,
  kPersistentRelease = 4,
  kPersistentFlags = 5,
  kPersistentCluster = 6
};

namespace {

constexpr int kThreads = 256, kWarps = kThreads / 32;
constexpr int kBatch = 6;            // 16-byte loads a lane per row batch: 3 KB a warp, a 2304-byte row in one
constexpr int kMinCtas = 3;          // CTAs an SM the register budget allows (85 registers)
constexpr int kMaxXWords = 2048;     // the shared x vector: 8 KB of int8 activations
constexpr int kLayers = 36;

struct Phase {
  const uint8_t* w;  // rows x row_bytes, row_bytes a multiple of 16
  int rows, row_bytes;
  const int* x;      // the previous phase's output (x_rows values), repeated over x_mask + 1 words
  int x_rows, x_mask;
  int* y;            // rows values
};

__device__ __forceinline__ void load_batch(const Phase& ph, int row, int b, int lane, uint4 (&v)[kBatch]) {
  const int n16 = ph.row_bytes / 16;
  const uint4* r = reinterpret_cast<const uint4*>(ph.w + int64_t{row} * ph.row_bytes);
#pragma unroll
  for (int j = 0; j < kBatch; ++j) {
    const int i = (b * kBatch + j) * 32 + lane;
    v[j] = i < n16 ? __ldg(r + i) : make_uint4(0, 0, 0, 0);
  }
}

__device__ __forceinline__ int dot_batch(const uint4 (&v)[kBatch], int b, int lane, const int* xs, int x_mask,
                                         int acc) {
#pragma unroll
  for (int j = 0; j < kBatch; ++j) {
    const int word = ((b * kBatch + j) * 32 + lane) * 4;
    acc = __dp4a(static_cast<int>(v[j].x), xs[word & x_mask], acc);
    acc = __dp4a(static_cast<int>(v[j].y), xs[(word + 1) & x_mask], acc);
    acc = __dp4a(static_cast<int>(v[j].z), xs[(word + 2) & x_mask], acc);
    acc = __dp4a(static_cast<int>(v[j].w), xs[(word + 3) & x_mask], acc);
  }
  return acc;
}

// The first batch of this warp's first row, before the wait (zeros where the warp has no row).
__device__ __forceinline__ void load_ahead(const Phase& ph, int gwarp, int lane, uint4 (&v)[kBatch]) {
  if (gwarp < ph.rows) {
    load_batch(ph, gwarp, 0, lane, v);
  } else {
#pragma unroll
    for (int j = 0; j < kBatch; ++j) v[j] = make_uint4(0, 0, 0, 0);
  }
}

// One phase over the grid: x to shared memory, then a warp a row, rows strided by the grid's warps.
__device__ void run_phase(const Phase& ph, const int* x_const, int gwarp, int nwarps, int lane, int* xs,
                          const uint4 (&first)[kBatch], bool have_first) {
  for (int i = threadIdx.x; i <= ph.x_mask; i += kThreads) xs[i] = x_const ? x_const[i] : ph.x[i % ph.x_rows];
  __syncthreads();
  const int batches = (ph.row_bytes / 16 + kBatch * 32 - 1) / (kBatch * 32);
  for (int row = gwarp; row < ph.rows; row += nwarps) {
    int acc = 0;
    for (int b = 0; b < batches; ++b) {
      uint4 v[kBatch];
      if (have_first && row == gwarp && b == 0) {
#pragma unroll
        for (int j = 0; j < kBatch; ++j) v[j] = first[j];
      } else {
        load_batch(ph, row, b, lane, v);
      }
      acc = dot_batch(v, b, lane, xs, ph.x_mask, acc);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if (lane == 0) ph.y[row] = acc;
  }
  __syncthreads();  // xs is rewritten by the next phase
}

__global__ void __launch_bounds__(kThreads, kMinCtas) chain_phase_kernel(Phase ph, int ahead, int empty) {
  if (empty) ph.rows = 0;
  __shared__ int xs[kMaxXWords];
  const int lane = threadIdx.x % 32, gwarp = blockIdx.x * kWarps + threadIdx.x / 32;
  pdl_trigger();
  uint4 first[kBatch];
  if (ahead) load_ahead(ph, gwarp, lane, first);
  pdl_wait();
  run_phase(ph, nullptr, gwarp, gridDim.x * kWarps, lane, xs, first, ahead != 0);
}

// Grid-wide barriers, the persistent kernel's stand-in for a kernel boundary; `target` is the phase's
// ordinal. Each orders this CTA's stores before its arrival (the CTA barrier first, then one thread's
// fence or release) and the next phase's loads after every other CTA's arrival.
//   kCounter: the cooperative-groups pattern, atomicAdd on one word between two __threadfence()s and a
//             volatile spin of thread 0 (the grid's CTAs serialize at that word's L2 slice).
//   kRelease: the same word, red.release to arrive and ld.acquire to spin, no separate fences.
//   kFlags:   a word a CTA, the phase number stored with st.release (no atomics to serialize); a
//             warp loads every CTA's word with ld.acquire (all of a lane's words at once) until all
//             hold the phase.
//   kCluster: kRelease with one arrival a cluster of kClusterCtas CTAs (the hardware cluster barrier
//             gathers the cluster first, and releases it after its first CTA's spin): a quarter of
//             the atomics on the word.
enum Barrier { kNone = 0, kCounter = 1, kRelease = 2, kFlags = 3, kCluster = 4 };
constexpr int kClusterCtas = 4;

__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}

template <int kKind>
__device__ __forceinline__ void grid_barrier(unsigned* sync, unsigned phase) {
  __syncthreads();
  if constexpr (kKind == kCounter) {
    if (threadIdx.x == 0) {
      __threadfence();
      atomicAdd(sync, 1u);
      while (*reinterpret_cast<volatile unsigned*>(sync) < phase * gridDim.x) {
      }
      __threadfence();
    }
  } else if constexpr (kKind == kRelease) {
    if (threadIdx.x == 0) {
      asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(sync) : "memory");
      while (ld_acquire(sync) < phase * gridDim.x) {
      }
    }
  } else if constexpr (kKind == kFlags) {
    if (threadIdx.x == 0) asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(sync + blockIdx.x), "r"(phase) : "memory");
    if (threadIdx.x < 32) {
      bool all = false;
      while (!all) {
        bool mine = true;
        for (unsigned i = threadIdx.x; i < gridDim.x; i += 32) mine &= ld_acquire(sync + i) >= phase;
        all = __all_sync(0xffffffffu, mine);
      }
    }
  } else if constexpr (kKind == kCluster) {
    // Clusters exist from sm_90 (cooperative_groups has them only there); below it chain_probe_run
    // returns before any launch, so the release build's sm_80 image holds no cluster code.
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    cluster.sync();  // the cluster's stores before its arrival
    if (cluster.block_rank() == 0 && threadIdx.x == 0) {
      asm volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(sync) : "memory");
      while (ld_acquire(sync) < phase * (gridDim.x / kClusterCtas)) {
      }
    }
    cluster.sync();
#endif
    return;
  }
  __syncthreads();
}

// One launch for the whole step. kNone reads the constant x in every phase (the floor; no waits).
template <int kKind>
__global__ void __launch_bounds__(kThreads, kMinCtas)
    chain_persistent_kernel(const Phase* phases, int n, const int* x_const, unsigned* sync, int ahead, int empty) {
  __shared__ int xs[kMaxXWords];
  const int lane = threadIdx.x % 32, gwarp = blockIdx.x * kWarps + threadIdx.x / 32;
  const int nwarps = gridDim.x * kWarps;
  for (int p = 0; p < n; ++p) {
    Phase ph = phases[p];
    if (empty) ph.rows = 0;
    uint4 first[kBatch];
    if (ahead) load_ahead(ph, gwarp, lane, first);
    if constexpr (kKind != kNone) {
      if (p > 0) grid_barrier<kKind>(sync, static_cast<unsigned>(p));
    }
    run_phase(ph, kKind == kNone ? x_const : nullptr, gwarp, nwarps, lane, xs, first, ahead != 0);
  }
}

__global__ void fill_kernel(uint8_t* p, int64_t n, uint32_t seed) {
  for (int64_t i = (blockIdx.x * int64_t{blockDim.x} + threadIdx.x) * 4; i < n; i += int64_t{gridDim.x} * blockDim.x * 4) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    *reinterpret_cast<uint32_t*>(p + i) = h;
  }
}

}  // namespace

struct ChainProbe {
  std::vector<Phase> phases;
  std::vector<void*> buffers;
  Phase* d_phases = nullptr;
  int* x_const = nullptr;
  unsigned* sync = nullptr;  // the barriers' words: one, or one a CTA
  double bytes = 0;
  cudaGraphExec_t graphs[2][8][2][2] = {};  // [pdl][ctas_per_sm - 1][ahead][empty]
  signed char cluster_fits[8] = {};          // [ctas_per_sm - 1]: 0 not asked yet, 1 resident, -1 not
};

namespace {
template <typename T>
T* alloc(ChainProbe* p, size_t bytes) {
  void* d = nullptr;
  if (cudaMalloc(&d, bytes) != cudaSuccess) return nullptr;
  p->buffers.push_back(d);
  return static_cast<T*>(d);
}
}  // namespace

void chain_probe_destroy(ChainProbe* p) {
  if (!p) return;
  for (auto& a : p->graphs)
    for (auto& b : a)
      for (auto& c : b)
        for (auto& g : c)
          if (g) cudaGraphExecDestroy(g);
  for (void* d : p->buffers) cudaFree(d);
  delete p;
}

// The phases of kLayers Qwen3-8B-like layers and lm_head over fresh buffers; nullptr if out of memory.
ChainProbe* chain_probe_create() {
  auto* p = new ChainProbe;
  struct Shape {
    int rows, row_bytes, x_mask;
  };
  // x_mask + 1 words of shared x: 1024 for 4096-wide inputs, 2048 for the 12288-wide down input.
  const Shape layer[] = {{32, 512, 1023},     {6144, 2304, 1023},  {32, 4096, 1023}, {4096, 2304, 1023},
                         {32, 512, 1023},     {24576, 2304, 1023}, {4096, 6912, 2047}};
  const Shape head = {151936, 3360, 1023};
  bool ok = (p->x_const = alloc<int>(p, kMaxXWords * 4)) && (p->sync = alloc<unsigned>(p, 4 * 8 * sm_count()));
  const int* prev = p->x_const;
  int prev_rows = kMaxXWords;
  auto add = [&](const Shape& s, uint32_t seed) {
    if (!ok) return;
    const int64_t n = int64_t{s.rows} * s.row_bytes;
    auto* w = alloc<uint8_t>(p, static_cast<size_t>(n));
    auto* y = alloc<int>(p, static_cast<size_t>(s.rows) * 4);
    if (!w || !y) {
      ok = false;
      return;
    }
    fill_kernel<<<1024, 256>>>(w, n, seed);
    p->phases.push_back({w, s.rows, s.row_bytes, prev, prev_rows, s.x_mask, y});
    p->bytes += static_cast<double>(n);
    prev = y;
    prev_rows = s.rows;
  };
  for (int l = 0; l < kLayers; ++l)
    for (const Shape& s : layer) add(s, static_cast<uint32_t>(p->phases.size()) * 0x9E3779B9u);
  add(head, 12345u);
  if (ok) ok = (p->d_phases = alloc<Phase>(p, p->phases.size() * sizeof(Phase))) != nullptr;
  if (ok) fill_kernel<<<8, 256>>>(reinterpret_cast<uint8_t*>(p->x_const), kMaxXWords * 4, 777u);
  if (ok)
    ok = cudaMemcpy(p->d_phases, p->phases.data(), p->phases.size() * sizeof(Phase), cudaMemcpyHostToDevice) ==
             cudaSuccess &&
         cudaDeviceSynchronize() == cudaSuccess;
  if (!ok) {
    cudaGetLastError();
    chain_probe_destroy(p);
    return nullptr;
  }
  return p;
}

double chain_probe_bytes(const ChainProbe* p) { return p->bytes; }
int chain_probe_layers() { return kLayers; }

// One decode step of the stand-in in `mode` with ctas_per_sm CTAs an SM (1-8). Returns the launch error
// (cudaErrorCooperativeLaunchTooLarge where a persistent grid cannot be resident); cudaErrorNotSupported
// below sm_90 or where the cluster grid cannot be resident.
cudaError_t chain_probe_run(ChainProbe* p, int mode, int ctas_per_sm, bool ahead, bool empty, cudaStream_t stream) {
  if (!pdl_supported()) return cudaErrorNotSupported;
  if (ctas_per_sm < 1 || ctas_per_sm > 8 || mode < kFloor || mode > kPersistentCluster) return cudaErrorInvalidValue;
  const int grid = ctas_per_sm * sm_count();
  int n = static_cast<int>(p->phases.size());
  int ahead_arg = ahead ? 1 : 0, empty_arg = empty ? 1 : 0;
  if (mode == kFloor || mode >= kPersistentCounter) {
    void* kernel = reinterpret_cast<void*>(mode == kFloor                ? chain_persistent_kernel<kNone>
                                           : mode == kPersistentCounter ? chain_persistent_kernel<kCounter>
                                           : mode == kPersistentRelease ? chain_persistent_kernel<kRelease>
                                           : mode == kPersistentFlags   ? chain_persistent_kernel<kFlags>
                                                                        : chain_persistent_kernel<kCluster>);
    void* args[] = {&p->d_phases, &n, &p->x_const, &p->sync, &ahead_arg, &empty_arg};
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(grid);
    cfg.blockDim = dim3(kThreads);
    cfg.stream = stream;
    cudaLaunchAttribute attr;
    cfg.attrs = &attr;
    cfg.numAttrs = 1;
    if (mode == kPersistentCluster) {
      // Cooperative and cluster launches do not combine, so the driver does not check that every
      // CTA is resident (a spin on one that is not would never end): checked here, once a grid size.
      attr.id = cudaLaunchAttributeClusterDimension;
      attr.val.clusterDim = {kClusterCtas, 1, 1};
      signed char& fits = p->cluster_fits[ctas_per_sm - 1];
      if (fits == 0) {
        int clusters = 0;
        fits = cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg) == cudaSuccess && clusters * kClusterCtas >= grid
                   ? 1
                   : -1;
      }
      if (fits < 0) return cudaErrorNotSupported;
    } else {  // a cooperative launch: the driver refuses a grid that cannot be resident
      attr.id = cudaLaunchAttributeCooperative;
      attr.val.cooperative = 1;
    }
    if (const cudaError_t e = cudaMemsetAsync(p->sync, 0, 4 * size_t(grid), stream); e != cudaSuccess) return e;
    return cudaLaunchKernelExC(&cfg, kernel, args);
  }
  const bool pdl = mode == kChainPdl;
  cudaGraphExec_t& exec = p->graphs[pdl][ctas_per_sm - 1][ahead_arg][empty_arg];
  if (!exec) {
    cudaStream_t s;
    if (const cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); e != cudaSuccess) return e;
    cudaGraph_t graph = nullptr;
    cudaError_t e = cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    for (int i = 0; e == cudaSuccess && i < n; ++i)
      e = pdl ? launch_pdl(chain_phase_kernel, dim3(grid), dim3(kThreads), 0, s, p->phases[i], ahead_arg, empty_arg)
              : (chain_phase_kernel<<<grid, kThreads, 0, s>>>(p->phases[i], ahead_arg, empty_arg), cudaGetLastError());
    const cudaError_t end = cudaStreamEndCapture(s, &graph);
    if (e == cudaSuccess) e = end;
    if (e == cudaSuccess) e = cudaGraphInstantiate(&exec, graph, 0);
    if (graph) cudaGraphDestroy(graph);
    cudaStreamDestroy(s);
    if (e != cudaSuccess) {
      exec = nullptr;
      return e;
    }
  }
  return cudaGraphLaunch(exec, stream);
}

// The last phase's output (lm_head's rows) after a run.
cudaError_t chain_probe_output(const ChainProbe* p, std::vector<int>& out) {
  const Phase& last = p->phases.back();
  out.resize(static_cast<size_t>(last.rows));
  return cudaMemcpy(out.data(), last.y, out.size() * 4, cudaMemcpyDeviceToHost);
}

}  // namespace bw24::bench
