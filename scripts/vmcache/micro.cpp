// Micro-benchmarks of vmcache's buffer manager that correspond to `bufcache bench pool`:
// pin-hit (fixS + unfixS of a random resident page; also the optimistic GuardO read that
// its B-tree lookups use, and fixX + unfixX), xmf-read (copy `transfer` bytes out of a
// random resident page under an optimistic guard), and random-evict (fixS + unfixS of a
// random page of a data set twice the pool: a miss evicts in batches and preads with
// O_DIRECT). Prints one JSON object per measurement in the fields of `bench pool --json`.
//
// vmcache's source is not part of bufcache: this file includes it from the checkout named
// by VMCACHE_SRC at compile time (see run.sh) and renames its main(). Its buffer manager
// is a global configured from environment variables at start-up (PHYSGB, VIRTGB, BLOCK,
// BATCH), so run.sh starts one process per configuration.
//
// Environment of this program: MODE (pinhit | read | evict), THREADS, DATAMB (data set
// size, MiB), RUNMS (length of one timed run), REPEAT (runs, best reported), WARMMS
// (evict only: random reads before timing, so that dirty pages from loading are written
// and the resident set is random), TRANSFER (read only: bytes per read), SEED.
#define main vmcache_main
#include VMCACHE_SRC
#undef main

#include <chrono>
#include <cstdio>
#include <cstring>

namespace micro {

struct SplitMix {
   u64 s;
   SplitMix(u64 seed, u64 stream) : s(seed ^ (stream * 0xD1B54A32D192ED03ull)) {}
   inline u64 next() {
      s += 0x9E3779B97F4A7C15ull;
      u64 z = s;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
      return z ^ (z >> 31);
   }
   // Uniform in [0, n) by multiply-shift, as in bufcache-bench's pool timing.
   inline u64 below(u64 n) { return (u64)(((unsigned __int128)next() * n) >> 64); }
};

u64 env(const char* name, u64 dflt) {
   const char* v = getenv(name);
   return v ? strtoull(v, nullptr, 10) : dflt;
}

// Each timed run draws from its own streams (run number x 1024 + thread), so that a run
// never replays the offsets of the run before it (which would find them all cached).
u64 runNumber = 0;

// Run `fn(stream, stop)` on `threads` threads for `ms` milliseconds; ops per second,
// summed over threads, each over its own elapsed time.
template <class Fn>
double timed(unsigned threads, u64 ms, Fn fn) {
   atomic<bool> stop(false);
   atomic<unsigned> ready(0);
   vector<double> rate(threads);
   vector<thread> ts;
   u64 run = runNumber++;
   for (unsigned i = 0; i < threads; i++)
      ts.emplace_back([&, i]() {
         workerThreadId = i;
         ready++;
         while (ready.load() < threads + 1) {}
         auto t0 = chrono::steady_clock::now();
         u64 ops = fn(run * 1024 + i, stop);
         double s = chrono::duration<double>(chrono::steady_clock::now() - t0).count();
         rate[i] = ops / s;
      });
   while (ready.load() < threads) {}
   ready++;
   this_thread::sleep_for(chrono::milliseconds(ms));
   stop = true;
   for (auto& t : ts) t.join();
   double sum = 0;
   for (double r : rate) sum += r;
   return sum;
}

}  // namespace micro

int main() {
   using namespace micro;
   const char* mode = getenv("MODE") ? getenv("MODE") : "pinhit";
   unsigned threads = env("THREADS", 1);
   u64 dataPages = env("DATAMB", 256) * 1024 * 1024 / pageSize;
   u64 runMs = env("RUNMS", 1000);
   u64 repeat = env("REPEAT", 3);
   u64 seed = env("SEED", 42);
   u64 transfer = env("TRANSFER", 64);
   const u64 checkEvery = 64;

   // Load: allocate pages 1..dataPages (pid 0 is vmcache's metadata page), each holding
   // its pid, unlocked as soon as written. Pages beyond the pool are evicted (written)
   // by vmcache itself while loading, exactly as its B-tree loader does.
   for (u64 i = 0; i < dataPages; i++) {
      Page* p = bm.allocPage();
      PID pid = bm.toPID(p);
      memcpy(reinterpret_cast<u8*>(p) + 8, &pid, sizeof(pid));
      bm.unfixX(pid);
   }
   u64 first = 1, count = dataPages;

   auto pinS = [&](u64 i, atomic<bool>& stop) {
      SplitMix r(seed, i);
      u64 ops = 0;
      while (!stop.load(memory_order_relaxed)) {
         for (u64 k = 0; k < checkEvery; k++) {
            PID pid = first + r.below(count);
            Page* p = bm.fixS(pid);
            asm volatile("" : : "r"(p) : "memory");
            bm.unfixS(pid);
         }
         ops += checkEvery;
      }
      return ops;
   };
   auto pinX = [&](u64 i, atomic<bool>& stop) {
      SplitMix r(seed, i);
      u64 ops = 0;
      while (!stop.load(memory_order_relaxed)) {
         for (u64 k = 0; k < checkEvery; k++) {
            PID pid = first + r.below(count);
            Page* p = bm.fixX(pid);
            asm volatile("" : : "r"(p) : "memory");
            bm.unfixX(pid);
         }
         ops += checkEvery;
      }
      return ops;
   };
   // The optimistic read of vmcache's B-tree: version before, read, version after.
   auto readO = [&](u64 bytes) {
      return [&, bytes](u64 i, atomic<bool>& stop) {
         SplitMix r(seed, i);
         vector<u8> buf(bytes);
         u64 slots = pageSize / bytes;
         u64 ops = 0;
         while (!stop.load(memory_order_relaxed)) {
            for (u64 k = 0; k < checkEvery; k++) {
               PID pid = first + r.below(count);
               u64 off = bytes >= pageSize ? 0 : r.below(slots) * bytes;
               for (;;) {
                  try {
                     GuardO<Page> g(pid);
                     memcpy(buf.data(), reinterpret_cast<u8*>(g.ptr) + off, min(bytes, pageSize));
                     g.release();
                     break;
                  } catch (const OLCRestartException&) {}
               }
               asm volatile("" : : "r"(buf.data()) : "memory");
            }
            ops += checkEvery;
         }
         return ops;
      };
   };

   auto emit = [&](const char* bench, const char* variant, const char* io, u64 bytes, double ops, double reads) {
      printf("{\"bench\":\"%s\",\"scheme\":\"vmcache\",\"variant\":\"%s\",\"io\":\"%s\","
             "\"transfer_bytes\":%llu,\"threads\":%u,\"ops_per_s\":%.1f,\"ns_per_op\":%.2f,"
             "\"working_set_bytes\":%llu,\"pool_bytes\":%llu,\"reads_per_s\":%.1f,\"miss_ratio\":%.4f,\"runs\":%llu,\"seed\":%llu}\n",
             bench, variant, io, (unsigned long long)bytes, threads, ops, threads * 1e9 / ops,
             (unsigned long long)(dataPages * pageSize), (unsigned long long)bm.physSize, reads, reads / ops,
             (unsigned long long)repeat, (unsigned long long)seed);
      fflush(stdout);
   };
   auto best = [&](auto fn, double* readsOut) {
      double b = 0, bReads = 0;
      for (u64 k = 0; k < repeat; k++) {
         u64 r0 = bm.readCount.load();
         auto t0 = chrono::steady_clock::now();
         double ops = timed(threads, runMs, fn);
         double s = chrono::duration<double>(chrono::steady_clock::now() - t0).count();
         double reads = (bm.readCount.load() - r0) / s;
         if (ops > b) { b = ops; bReads = reads; }
      }
      if (readsOut) *readsOut = bReads;
      return b;
   };

   if (!strcmp(mode, "pinhit")) {
      emit("pin-hit", "fixS+unfixS", "cached", pageSize, best(pinS, nullptr), 0);
      emit("pin-hit", "fixX+unfixX", "cached", pageSize, best(pinX, nullptr), 0);
      emit("pin-hit", "optimistic", "cached", 8, best(readO(8), nullptr), 0);
   } else if (!strcmp(mode, "read")) {
      emit("xmf-read", "optimistic", "cached", transfer, best(readO(transfer), nullptr), 0);
   } else if (!strcmp(mode, "evict")) {
      timed(threads, env("WARMMS", 5000), pinS);
      double reads = 0;
      double ops = best(pinS, &reads);
      emit("random-evict", "fixS+unfixS", "direct", pageSize, ops, reads);
   } else {
      fprintf(stderr, "unknown MODE %s\n", mode);
      return 1;
   }
   return 0;
}
