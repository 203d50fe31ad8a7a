// bw24-kernel-trace: every kernel's GPU start and end, inside CUDA graphs too, into a CSV, for any
// program that uses CUDA (a diagnostic; not part of libbw24). The driver loads it at cuInit:
//
//   CUDA_INJECTION64_PATH=$PWD/build/libbw24-kernel-trace.so BW24_KERNEL_TRACE=trace.csv
//     ./build/bw24-bench -m synthetic:qwen3-8b:Q4_K_M -p 16 -n 128 -r 1   (one command line)
//
// Why: ncu times kernels one at a time (serialized, caches flushed), so its sum is not the decode
// step; the step is a chain of PDL launches in one graph, where a kernel starts before its
// predecessor ends and waits inside. CUPTI's concurrent-kernel records keep that overlap: for
// consecutive kernels, end(i) - end(i - 1) is kernel i's share of the step's critical path, and
// start(i) - end(i - 1) (negative under PDL) how early it got its CTAs resident.
// tools/trace/step_profile.py turns the CSV into a per-kernel table of one decode step.
#include <cupti.h>
#include <cxxabi.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace {

struct KernelRecord {
  uint64_t start, end;
  int32_t grid, block;
  std::string name;  // mangled: demangled once per name when the CSV is written
};

std::mutex g_mutex;
std::vector<KernelRecord> g_records;
constexpr size_t kBufferBytes = 8u << 20;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(aligned_alloc(8, kBufferBytes));
  *size = *buffer ? kBufferBytes : 0;  // 0: CUPTI drops the records it cannot place
  *max_records = 0;  // as many as fit
}

// The demangled name, quotes replaced (the CSV quotes it).
std::string demangled(const std::string& name) {
  int status = 0;
  char* d = abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status);
  std::string s = status == 0 && d ? d : name;
  free(d);
  for (char& c : s)
    if (c == '"') c = '\'';
  return s;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* rec = nullptr;
  std::lock_guard<std::mutex> lock(g_mutex);
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    if (rec->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(rec);
    g_records.push_back({k->start, k->end, k->gridX * k->gridY * k->gridZ, k->blockX * k->blockY * k->blockZ,
                         k->name ? k->name : "?"});
  }
  free(buffer);
}

void write_trace() {
  cuptiActivityFlushAll(1);
  const char* env = std::getenv("BW24_KERNEL_TRACE");
  const char* path = env && *env ? env : "kernel-trace.csv";
  FILE* f = std::fopen(path, "w");
  if (!f) return;
  std::lock_guard<std::mutex> lock(g_mutex);
  std::map<std::string, std::string> names;  // mangled -> demangled: a step repeats a few dozen kernels
  std::fprintf(f, "start_ns,end_ns,ctas,threads,kernel\n");
  for (const KernelRecord& r : g_records) {
    auto it = names.find(r.name);
    if (it == names.end()) it = names.emplace(r.name, demangled(r.name)).first;
    std::fprintf(f, "%llu,%llu,%d,%d,\"%s\"\n", static_cast<unsigned long long>(r.start),
                 static_cast<unsigned long long>(r.end), r.grid, r.block, it->second.c_str());
  }
  std::fclose(f);
  std::fprintf(stderr, "bw24-kernel-trace: %zu kernels into %s\n", g_records.size(), path);
}

}  // namespace

// The driver calls this once, at cuInit, when CUDA_INJECTION64_PATH names this library.
extern "C" __attribute__((visibility("default"))) int InitializeInjection() {
  if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS ||
      cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "bw24-kernel-trace: CUPTI activity tracing could not be enabled\n");
    return 0;
  }
  std::atexit(write_trace);
  return 1;
}
