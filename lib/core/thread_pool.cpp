#include "lib/core/thread_pool.h"

#include <algorithm>

namespace bw24 {

ThreadPool::ThreadPool(int n_threads) {
  if (n_threads <= 0) n_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  n_threads_ = n_threads;
  for (int i = 1; i < n_threads_; ++i) workers_.emplace_back([this, i] { worker(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  start_cv_.notify_all();
  for (auto& t : workers_) t.join();
}

static void run_part(const std::function<void(int64_t, int64_t)>& fn, int64_t n, int parts,
                     int index) {
  int64_t chunk = (n + parts - 1) / parts;
  int64_t b = std::min<int64_t>(n, chunk * index), e = std::min<int64_t>(n, b + chunk);
  if (b < e) fn(b, e);
}

void ThreadPool::parallel_for(int64_t n, int64_t min_per_thread,
                              const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  int parts = static_cast<int>(std::min<int64_t>(n_threads_, n / std::max<int64_t>(1, min_per_thread)));
  if (parts <= 1) {
    fn(0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    job_ = &fn;
    job_n_ = n;
    job_parts_ = parts;
    pending_ = parts - 1;
    ++generation_;
  }
  start_cv_.notify_all();
  run_part(fn, n, parts, 0);
  std::unique_lock<std::mutex> lock(mu_);
  done_cv_.wait(lock, [this] { return pending_ == 0; });
  job_ = nullptr;
}

void ThreadPool::worker(int index) {
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(int64_t, int64_t)>* job;
    int64_t n;
    int parts;
    {
      std::unique_lock<std::mutex> lock(mu_);
      start_cv_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      job = job_;
      n = job_n_;
      parts = job_parts_;
    }
    if (index < parts) {
      run_part(*job, n, parts, index);
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }
}

}  // namespace bw24
