/*
 * Unroll Lens kernel timer: a CUPTI injection library. The driver loads it into the program when
 * CUDA_INJECTION64_PATH names it and calls InitializeInjection() before the first CUDA call; it
 * then records every kernel's start and end (the Activity API's concurrent-kernel records: the
 * program's kernels are not serialised), its grid, block, registers and shared memory, and writes
 * them as JSON lines to the file UNROLL_LENS_TIMER_OUT names:
 *
 *   {"init":1,"cupti":130001,"pid":123,"base":"1764141234000000000"}
 *   {"k":"_Z6kernelPf","s":1523000,"du":12345,"d":0,"st":7,"g":[64,1,1],"b":[256,1,1],"r":32,"ss":0,"ds":0}
 *   {"error":"cuptiActivityEnable(KERNEL): CUPTI_ERROR_..."}
 *   {"end":1,"records":42,"dropped":0}
 *
 * With UNROLL_LENS_PCSAMPLING=<n> (5..31) it also samples every SM's warps every 2^n cycles with
 * CUPTI's PC Sampling API (continuous mode: kernels are not serialised) and writes, before the end
 * line, each sampled PC's stall-reason counts summed over the run, then a summary:
 *
 *   {"pc":128,"f":"_Z6kernelPf","c":"1234567","n":[[3,17],[12,4]]}
 *   {"pcs":1,"period":15,"reasons":["smsp__pcsamp_warps_issue_stalled_barrier",...],"total":9000,"dropped":0,"nonUser":0,"hwFull":0,"lost":0}
 *   {"pcerror":"cuptiPCSamplingEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES"}
 *
 * With UNROLL_LENS_HOLD=<path> the program stops at its first kernel launch until that file exists:
 * Unroll Lens starts the next run while the current one is timed and lets it go when the GPU is
 * free, so the next run's start-up (CUDA context, the program's own set-up) hides behind this one's
 * work without two programs' kernels sharing the GPU. It writes {"held":<ns waited>} when let go.
 *
 * With UNROLL_LENS_GPU_TIME=1 it also reads each kernel's gpu__time_duration (ncu's duration) with
 * CUPTI's range profiler: {"gt":<ns>,"gi":<launch index>} lines, {"gterror":...}, a {"gtend":...}
 * summary (see "GPU time" below). Built as C++: cupti_profiler_host.h includes <string>.
 *
 * "n" pairs index "reasons"; "pc" is the offset in the function. The summary also gives the host time
 * spent enabling and finishing sampling (enableMs, finishMs). UNROLL_LENS_PC_HW_BUFFER_MB and
 * UNROLL_LENS_PC_SLEEP_MS set CUPTI's hardware buffer size (default 64 MB, measured in
 * docs/measurements.md) and its worker threads' sleep (CUPTI's 100 ms when unset). A PC sampling failure is a
 * "pcerror", never an "error": the kernel times stay valid without it.
 *
 * Times are ns: "s" the start after "base" (the CUPTI timestamp when the library started) and "du"
 * the duration, both exact as JSON numbers (a raw timestamp, ~1.7e18, is not: doubles lose its last
 * 8 bits, 0.4 % of a 60 µs kernel). Records are flushed when a context is destroyed and at exit;
 * dropped records and CUPTI errors are written, never hidden. Unroll Lens builds this file with the
 * user's own nvcc (src/engine/gpu/cupti/timerLibrary.ts); it reads nothing else from the
 * environment and writes nothing else.
 */
#include <cupti.h>
#include <cupti_pcsampling.h>
#if defined(__has_include)
#if __has_include(<cupti_range_profiler.h>)
#define UL_HAVE_RANGE_PROFILER 1
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#endif
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if CUPTI_API_VERSION >= 130000
typedef CUpti_ActivityKernel10 UlKernelRecord;
#elif CUPTI_API_VERSION >= 18
typedef CUpti_ActivityKernel9 UlKernelRecord;
#else
#error "CUPTI from CUDA 12.0 or newer is needed (CUpti_ActivityKernel9)"
#endif

#define UL_BUFFER_SIZE (8u * 1024u * 1024u)
#define UL_ALIGN 8

static FILE *ul_out = NULL;
static uint64_t ul_base = 0;
static unsigned long long ul_records = 0;
static unsigned long long ul_dropped = 0;
static int ul_finished = 0;

static void ul_error(const char *what, CUptiResult r) {
  const char *text = NULL;
  if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || !text) text = "unknown CUPTI error";
  if (ul_out) {
    fprintf(ul_out, "{\"error\":\"%s: %s\"}\n", what, text);
    fflush(ul_out);
  }
}

/* Kernel names as JSON strings: quotes, backslashes and control characters escaped. */
static void ul_write_name(const char *name) {
  fputc('"', ul_out);
  for (const unsigned char *c = (const unsigned char *)(name ? name : ""); *c; ++c) {
    if (*c == '"' || *c == '\\') fprintf(ul_out, "\\%c", *c);
    else if (*c < 0x20) fprintf(ul_out, "\\u%04x", *c);
    else fputc(*c, ul_out);
  }
  fputc('"', ul_out);
}

static void CUPTIAPI ul_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  void *p = NULL;
  /* CUPTI wants records 8-byte aligned; a buffer it cannot get is dropped records, counted by CUPTI */
  if (posix_memalign(&p, UL_ALIGN, UL_BUFFER_SIZE) != 0) p = NULL;
  *buffer = (uint8_t *)p;
  *size = p ? UL_BUFFER_SIZE : 0;
  *max_records = 0;
}

static void CUPTIAPI ul_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid) {
  CUpti_Activity *record = NULL;
  for (;;) {
    CUptiResult r = cuptiActivityGetNextRecord(buffer, valid, &record);
    if (r == CUPTI_ERROR_MAX_LIMIT_REACHED) break;
    if (r != CUPTI_SUCCESS) {
      ul_error("cuptiActivityGetNextRecord", r);
      break;
    }
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && record->kind != CUPTI_ACTIVITY_KIND_KERNEL) continue;
    const UlKernelRecord *k = (const UlKernelRecord *)record;
    if (!ul_out) continue;
    fputs("{\"k\":", ul_out);
    ul_write_name(k->name);
    fprintf(ul_out, ",\"s\":%lld,\"du\":%llu,\"d\":%u,\"st\":%u,\"g\":[%d,%d,%d],\"b\":[%d,%d,%d],\"r\":%u,\"ss\":%d,\"ds\":%d}\n",
            (long long)(k->start - ul_base), (unsigned long long)(k->end >= k->start ? k->end - k->start : 0), k->deviceId, k->streamId, k->gridX, k->gridY, k->gridZ,
            k->blockX, k->blockY, k->blockZ, (unsigned)k->registersPerThread, k->staticSharedMemory, k->dynamicSharedMemory);
    ++ul_records;
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS) ul_dropped += dropped;
  if (ul_out) fflush(ul_out);
  (void)size;
  free(buffer);
}

/* ---- PC sampling ------------------------------------------------------------------------------ */

#define UL_PC_COLLECT 4096u        /* PCs per cuptiPCSamplingGetData */
#define UL_PC_TABLE (1u << 17)     /* distinct (cubin, function, PC) kept; more are counted as lost */
#define UL_MAX_REASONS 128u
#define UL_MAX_CONTEXTS 16
#define UL_DRAIN_NS 20000000ull    /* a launch drains CUPTI's parsed PCs at most every 20 ms */

typedef struct {
  uint64_t crc, pc;
  const char *function; /* CUPTI's string, kept for the run (CUPTI shares it between records) */
  uint64_t *counts;     /* UL_MAX_REASONS, by position in ul_reason_names */
} UlPc;

typedef struct {
  CUcontext ctx;
  int active;
  CUpti_PCSamplingData data;
  size_t reasons;
  uint32_t *reason_index;     /* CUPTI's stall reason index of each of this context's reasons */
  unsigned *reason_position;  /* its position in ul_reason_names */
} UlSamplingContext;

static int ul_pc_period = 0; /* 0: no PC sampling */
static UlPc *ul_pcs = NULL;
static unsigned long long ul_pc_lost = 0, ul_pc_total = 0, ul_pc_dropped = 0, ul_pc_non_user = 0;
static int ul_pc_hw_full = 0;
static char *ul_reason_names[UL_MAX_REASONS];
static unsigned ul_reason_count = 0;
static UlSamplingContext ul_contexts[UL_MAX_CONTEXTS];
static uint64_t ul_last_drain = 0;
static const char *ul_hold = NULL; /* UNROLL_LENS_HOLD: wait at the first launch until this file exists */
static CUcontext ul_pc_pending = NULL; /* created while held: sampling starts when the hold is let go */
/* Host time spent enabling (per context) and finishing (drain, disable) sampling: its cost, reported. */
static uint64_t ul_pc_enable_ns = 0, ul_pc_finish_ns = 0;
/*
 * Tuning, measured on an H100 (docs/measurements.md): CUPTI's default 512 MB hardware buffer costs
 * a run ~0.15 s more than 64 MB (1.09 s against 0.94 s, a 0.66 s program), with no buffer ever
 * full at 2^15 cycles; a shorter worker sleep (10 ms) did not help. 0: CUPTI's default.
 */
static size_t ul_pc_hw_buffer_mb = 64;
static unsigned ul_pc_sleep_ms = 0;

static void ul_pc_error(const char *what, CUptiResult r) {
  const char *text = NULL;
  if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || !text) text = "unknown CUPTI error";
  if (ul_out) {
    fprintf(ul_out, "{\"pcerror\":\"%s: %s\"}\n", what, text);
    fflush(ul_out);
  }
}

static uint64_t ul_now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static unsigned ul_reason_position(const char *name) {
  for (unsigned i = 0; i < ul_reason_count; ++i)
    if (strcmp(ul_reason_names[i], name) == 0) return i;
  if (ul_reason_count == UL_MAX_REASONS) return UL_MAX_REASONS;
  ul_reason_names[ul_reason_count] = strdup(name);
  return ul_reason_count++;
}

static uint64_t ul_hash(uint64_t crc, uint64_t pc, const char *f) {
  uint64_t h = crc * 0x9E3779B97F4A7C15ull ^ (pc + 0x632BE59BD9B4E019ull);
  for (const unsigned char *c = (const unsigned char *)(f ? f : ""); *c; ++c) h = (h ^ *c) * 0x100000001B3ull;
  return h;
}

/* The table entry of one PC of one function of one cubin, made on first sight; NULL when full. */
static UlPc *ul_pc_entry(uint64_t crc, uint64_t pc, const char *f) {
  if (!ul_pcs) ul_pcs = (UlPc *)calloc(UL_PC_TABLE, sizeof(UlPc));
  if (!ul_pcs) return NULL;
  for (uint64_t i = ul_hash(crc, pc, f), n = 0; n < UL_PC_TABLE / 2; ++i, ++n) {
    UlPc *e = &ul_pcs[i & (UL_PC_TABLE - 1)];
    if (!e->counts) {
      e->counts = (uint64_t *)calloc(UL_MAX_REASONS, sizeof(uint64_t));
      if (!e->counts) return NULL;
      e->crc = crc;
      e->pc = pc;
      e->function = f ? f : "";
      return e;
    }
    if (e->crc == crc && e->pc == pc && strcmp(e->function, f ? f : "") == 0) return e;
  }
  return NULL; /* half full: keep probing short */
}

/* Adds the PCs CUPTI put in c->data to the table, and its totals. */
static void ul_pc_absorb(UlSamplingContext *c) {
  CUpti_PCSamplingData *d = &c->data;
  ul_pc_total += d->totalSamples;
  ul_pc_dropped += d->droppedSamples;
  ul_pc_non_user += d->nonUsrKernelsTotalSamples;
  if (d->hardwareBufferFull) ul_pc_hw_full = 1;
  for (size_t i = 0; i < d->totalNumPcs; ++i) {
    const CUpti_PCSamplingPCData *p = &d->pPcData[i];
    UlPc *e = ul_pc_entry(p->cubinCrc, p->pcOffset, p->functionName);
    for (size_t r = 0; r < p->stallReasonCount; ++r) {
      uint64_t n = p->stallReason[r].samples;
      unsigned pos = UL_MAX_REASONS;
      for (size_t k = 0; k < c->reasons; ++k)
        if (c->reason_index[k] == p->stallReason[r].pcSamplingStallReasonIndex) pos = c->reason_position[k];
      if (e && pos < UL_MAX_REASONS) e->counts[pos] += n;
      else ul_pc_lost += n;
    }
  }
  d->totalNumPcs = 0;
}

/* Everything CUPTI has parsed for this context so far. */
static void ul_pc_drain(UlSamplingContext *c) {
  if (!c->active) return;
  for (int guard = 0; guard < 100000; ++guard) {
    CUpti_PCSamplingGetDataParams g;
    memset(&g, 0, sizeof g);
    g.size = CUpti_PCSamplingGetDataParamsSize;
    g.ctx = c->ctx;
    g.pcSamplingData = &c->data;
    c->data.totalNumPcs = 0;
    c->data.remainingNumPcs = 0;
    CUptiResult r = cuptiPCSamplingGetData(&g);
    if (r != CUPTI_SUCCESS) {
      if (r == CUPTI_ERROR_OUT_OF_MEMORY) ul_pc_hw_full = 1;
      ul_pc_error("cuptiPCSamplingGetData", r);
      return;
    }
    ul_pc_absorb(c);
    if (c->data.remainingNumPcs == 0) return;
  }
}

/* Drains, then ends sampling on the context: CUPTI copies what it still holds into the buffer. */
static void ul_pc_finish(UlSamplingContext *c) {
  if (!c->active) return;
  ul_pc_drain(c);
  CUpti_PCSamplingDisableParams p;
  memset(&p, 0, sizeof p);
  p.size = CUpti_PCSamplingDisableParamsSize;
  p.ctx = c->ctx;
  c->data.totalNumPcs = 0;
  CUptiResult r = cuptiPCSamplingDisable(&p);
  if (r != CUPTI_SUCCESS) ul_pc_error("cuptiPCSamplingDisable", r);
  else ul_pc_absorb(c);
  c->active = 0;
}

static UlSamplingContext *ul_context(CUcontext ctx) {
  for (int i = 0; i < UL_MAX_CONTEXTS; ++i)
    if (ul_contexts[i].active && ul_contexts[i].ctx == ctx) return &ul_contexts[i];
  return NULL;
}

/* A new context: enable PC sampling on it, learn its stall reasons, configure, give it a buffer. */
static void ul_pc_configure(CUcontext ctx, UlSamplingContext *c);

static void ul_pc_start(CUcontext ctx) {
  uint64_t t0 = ul_now_ns();
  UlSamplingContext *c = NULL;
  for (int i = 0; i < UL_MAX_CONTEXTS && !c; ++i)
    if (!ul_contexts[i].active && !ul_contexts[i].reason_index) c = &ul_contexts[i];
  if (!c) {
    ul_pc_error("more CUDA contexts than the timer samples", CUPTI_ERROR_MAX_LIMIT_REACHED);
    return;
  }
  ul_pc_configure(ctx, c);
  ul_pc_enable_ns += ul_now_ns() - t0;
}

static void ul_pc_configure(CUcontext ctx, UlSamplingContext *c) {
  CUpti_PCSamplingEnableParams e;
  memset(&e, 0, sizeof e);
  e.size = CUpti_PCSamplingEnableParamsSize;
  e.ctx = ctx;
  CUptiResult r = cuptiPCSamplingEnable(&e);
  if (r != CUPTI_SUCCESS) {
    ul_pc_error("cuptiPCSamplingEnable", r);
    return;
  }
  size_t n = 0;
  CUpti_PCSamplingGetNumStallReasonsParams np;
  memset(&np, 0, sizeof np);
  np.size = CUpti_PCSamplingGetNumStallReasonsParamsSize;
  np.ctx = ctx;
  np.numStallReasons = &n;
  r = cuptiPCSamplingGetNumStallReasons(&np);
  if (r != CUPTI_SUCCESS || n == 0) {
    ul_pc_error("cuptiPCSamplingGetNumStallReasons", r);
    return;
  }
  c->reasons = n;
  c->reason_index = (uint32_t *)calloc(n, sizeof(uint32_t));
  c->reason_position = (unsigned *)calloc(n, sizeof(unsigned));
  char **names = (char **)calloc(n, sizeof(char *));
  for (size_t i = 0; names && i < n; ++i) names[i] = (char *)calloc(CUPTI_STALL_REASON_STRING_SIZE, 1);
  CUpti_PCSamplingGetStallReasonsParams sp;
  memset(&sp, 0, sizeof sp);
  sp.size = CUpti_PCSamplingGetStallReasonsParamsSize;
  sp.ctx = ctx;
  sp.numStallReasons = n;
  sp.stallReasonIndex = c->reason_index;
  sp.stallReasons = names;
  r = c->reason_index && c->reason_position && names ? cuptiPCSamplingGetStallReasons(&sp) : CUPTI_ERROR_OUT_OF_MEMORY;
  if (r != CUPTI_SUCCESS) {
    ul_pc_error("cuptiPCSamplingGetStallReasons", r);
    return;
  }
  for (size_t i = 0; i < n; ++i) {
    c->reason_position[i] = ul_reason_position(names[i] ? names[i] : "");
    free(names[i]);
  }
  free(names);

  c->data.size = sizeof(CUpti_PCSamplingData);
  c->data.collectNumPcs = UL_PC_COLLECT;
  c->data.pPcData = (CUpti_PCSamplingPCData *)calloc(UL_PC_COLLECT, sizeof(CUpti_PCSamplingPCData));
  for (size_t i = 0; c->data.pPcData && i < UL_PC_COLLECT; ++i) {
    c->data.pPcData[i].size = sizeof(CUpti_PCSamplingPCData);
    c->data.pPcData[i].stallReason = (CUpti_PCSamplingStallReason *)calloc(n, sizeof(CUpti_PCSamplingStallReason));
    if (!c->data.pPcData[i].stallReason) {
      ul_pc_error("PC sampling buffers", CUPTI_ERROR_OUT_OF_MEMORY);
      return;
    }
  }
  if (!c->data.pPcData) {
    ul_pc_error("PC sampling buffers", CUPTI_ERROR_OUT_OF_MEMORY);
    return;
  }

  CUpti_PCSamplingConfigurationInfo info[8];
  memset(info, 0, sizeof info);
  info[0].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_PERIOD;
  info[0].attributeData.samplingPeriodData.samplingPeriod = (uint32_t)ul_pc_period;
  info[1].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_STALL_REASON;
  info[1].attributeData.stallReasonData.stallReasonCount = n;
  info[1].attributeData.stallReasonData.pStallReasonIndex = c->reason_index;
  info[2].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_COLLECTION_MODE;
  info[2].attributeData.collectionModeData.collectionMode = CUPTI_PC_SAMPLING_COLLECTION_MODE_CONTINUOUS;
  info[3].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_OUTPUT_DATA_FORMAT;
  info[3].attributeData.outputDataFormatData.outputDataFormat = CUPTI_PC_SAMPLING_OUTPUT_DATA_FORMAT_PARSED;
  info[4].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SAMPLING_DATA_BUFFER;
  info[4].attributeData.samplingDataBufferData.samplingDataBuffer = &c->data;
  /* a scratch buffer too small for a kernel's PCs loses them; 1 MB is CUPTI's default (~5500 PCs) */
  info[5].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_SCRATCH_BUFFER_SIZE;
  info[5].attributeData.scratchBufferSizeData.scratchBufferSize = 16u * 1024u * 1024u;
  size_t attributes = 6;
  if (ul_pc_hw_buffer_mb) {
    info[attributes].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_HARDWARE_BUFFER_SIZE;
    info[attributes++].attributeData.hardwareBufferSizeData.hardwareBufferSize = ul_pc_hw_buffer_mb * 1024u * 1024u;
  }
  if (ul_pc_sleep_ms) {
    info[attributes].attributeType = CUPTI_PC_SAMPLING_CONFIGURATION_ATTR_TYPE_WORKER_THREAD_PERIODIC_SLEEP_SPAN;
    info[attributes++].attributeData.workerThreadPeriodicSleepSpanData.workerThreadPeriodicSleepSpan = ul_pc_sleep_ms;
  }
  CUpti_PCSamplingConfigurationInfoParams cp;
  memset(&cp, 0, sizeof cp);
  cp.size = CUpti_PCSamplingConfigurationInfoParamsSize;
  cp.ctx = ctx;
  cp.numAttributes = attributes;
  cp.pPCSamplingConfigurationInfo = info;
  r = cuptiPCSamplingSetConfigurationAttribute(&cp);
  if (r != CUPTI_SUCCESS) {
    for (size_t i = 0; i < attributes; ++i)
      if (info[i].attributeStatus != CUPTI_SUCCESS) ul_pc_error("cuptiPCSamplingSetConfigurationAttribute (an attribute)", info[i].attributeStatus);
    ul_pc_error("cuptiPCSamplingSetConfigurationAttribute", r);
    return;
  }
  c->ctx = ctx;
  c->active = 1;
}

/* The PCs and the summary line (at exit, after every context finished). */
static void ul_pc_write(void) {
  if (!ul_out || !ul_pc_period) return;
  for (size_t i = 0; ul_pcs && i < UL_PC_TABLE; ++i) {
    const UlPc *e = &ul_pcs[i];
    if (!e->counts) continue;
    int any = 0;
    for (unsigned r = 0; r < ul_reason_count; ++r) any |= e->counts[r] != 0;
    if (!any) continue;
    fprintf(ul_out, "{\"pc\":%llu,\"f\":", (unsigned long long)e->pc);
    ul_write_name(e->function);
    fprintf(ul_out, ",\"c\":\"%llu\",\"n\":[", (unsigned long long)e->crc);
    int first = 1;
    for (unsigned r = 0; r < ul_reason_count; ++r) {
      if (!e->counts[r]) continue;
      fprintf(ul_out, "%s[%u,%llu]", first ? "" : ",", r, (unsigned long long)e->counts[r]);
      first = 0;
    }
    fputs("]}\n", ul_out);
  }
  fprintf(ul_out, "{\"pcs\":1,\"period\":%d,\"reasons\":[", ul_pc_period);
  for (unsigned r = 0; r < ul_reason_count; ++r) {
    if (r) fputc(',', ul_out);
    ul_write_name(ul_reason_names[r]);
  }
  fprintf(ul_out, "],\"total\":%llu,\"dropped\":%llu,\"nonUser\":%llu,\"hwFull\":%d,\"lost\":%llu,\"enableMs\":%.1f,\"finishMs\":%.1f}\n",
          ul_pc_total, ul_pc_dropped, ul_pc_non_user, ul_pc_hw_full, ul_pc_lost, ul_pc_enable_ns / 1e6, ul_pc_finish_ns / 1e6);
}


/* ---- GPU time: ncu's own counter, gpu__time_duration, per kernel ------------------------------ */
/*
 * UNROLL_LENS_GPU_TIME=1: CUPTI's range profiler, one range a kernel (auto range, kernel replay),
 * reads gpu__time_duration.sum, the counter ncu reports as a kernel's duration. The activity
 * record's start and end read about 0.6 us a launch longer on an H200 (docs/measurements.md,
 * issue 42), which decides the answer on a 5 us kernel; this counter matched ncu's within 32 ns
 * (one tick of the GPU's timer) on most kernels. User replay was measured too: its auto ranges read
 * 0.8 us longer than ncu, so it is not offered. One pass suffices for this one metric: nothing is
 * replayed. Each range is written, in launch order (one context), as
 *   {"gt":12345.0,"gi":0}
 * a failure as {"gterror":"..."} (the activity records stay valid), and at exit
 *   {"gtend":1,"ranges":42,"dropped":0,"prepareMs":400.0,"enableMs":20.0,"hostMs":430.5}
 * Kernel replay has a price, measured on an H200: the run's kernel records then read start = end = 0
 * and PC sampling gets no samples, so Unroll Lens samples stalls in a run of its own.
 */
#define UL_GT_RANGES 128u
#ifdef UL_HAVE_RANGE_PROFILER
typedef struct {
  CUcontext ctx;
  CUpti_RangeProfiler_Object *object;
  CUpti_Profiler_Host_Object *host;
  uint8_t *config, *data;
  size_t config_size, data_size;
  const char *chip; /* CUPTI's name of the context's chip (kept by CUPTI) */
  unsigned pending;  /* kernels launched since the last collection */
  int prepared, running, failed;
} UlGpuTime;

static int ul_gt_mode = 0; /* 1: on */
static int ul_gt_initialised = 0;
static UlGpuTime ul_gt[UL_MAX_CONTEXTS];
static unsigned long long ul_gt_index = 0, ul_gt_dropped = 0;
/* host time in the profiler's calls: all, the host side's set-up (before a hold), turning it on (after) */
static uint64_t ul_gt_ns = 0, ul_gt_prepare_ns = 0, ul_gt_enable_ns = 0;
static const char *ul_gt_metrics[] = {"gpu__time_duration.sum"};

static int ul_gt_check(UlGpuTime *g, const char *what, CUptiResult r) {
  if (r == CUPTI_SUCCESS) return 1;
  const char *text = NULL;
  if (cuptiGetResultString(r, &text) != CUPTI_SUCCESS || !text) text = "unknown CUPTI error";
  if (ul_out) {
    fprintf(ul_out, "{\"gterror\":\"%s: %s\"}\n", what, text);
    fflush(ul_out);
  }
  if (g) g->failed = 1;
  return 0;
}

static int ul_gt_start(UlGpuTime *g) {
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params ci = {CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  ci.pRangeProfilerObject = g->object;
  ci.counterDataSize = g->data_size;
  ci.pCounterData = g->data;
  if (!ul_gt_check(g, "cuptiRangeProfilerCounterDataImageInitialize", cuptiRangeProfilerCounterDataImageInitialize(&ci))) return 0;
  CUpti_RangeProfiler_SetConfig_Params sc = {CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
  sc.pRangeProfilerObject = g->object;
  sc.configSize = g->config_size;
  sc.pConfig = g->config;
  sc.counterDataImageSize = g->data_size;
  sc.pCounterDataImage = g->data;
  sc.range = CUPTI_AutoRange;
  sc.replayMode = CUPTI_KernelReplay;
  sc.maxRangesPerPass = UL_GT_RANGES;
  sc.numNestingLevels = 1;
  sc.minNestingLevel = 1;
  sc.passIndex = 0;
  sc.targetNestingLevel = 1;
  if (!ul_gt_check(g, "cuptiRangeProfilerSetConfig", cuptiRangeProfilerSetConfig(&sc))) return 0;
  CUpti_RangeProfiler_Start_Params st = {CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
  st.pRangeProfilerObject = g->object;
  if (!ul_gt_check(g, "cuptiRangeProfilerStart", cuptiRangeProfilerStart(&st))) return 0;
  g->running = 1;
  g->pending = 0;
  return 1;
}

/*
 * The host side of the range profiler for a context, at its first launch: before a held run waits
 * (UNROLL_LENS_HOLD), so this part (its metric tables: most of the set-up's half second on an
 * H200) hides behind the run before it, as the program's own start-up does.
 */
static int ul_gt_host(UlGpuTime *g, const uint8_t *available, int report);

static void ul_gt_prepare(CUcontext ctx) {
  UlGpuTime *g = NULL;
  for (int i = 0; i < UL_MAX_CONTEXTS && !g; ++i)
    if (ul_gt[i].ctx == ctx) return;
    else if (!ul_gt[i].ctx) g = &ul_gt[i];
  if (!g) {
    ul_gt_check(NULL, "more CUDA contexts than the GPU timer profiles", CUPTI_ERROR_MAX_LIMIT_REACHED);
    return;
  }
  g->ctx = ctx;
  uint64_t t0 = ul_now_ns();
  if (!ul_gt_initialised) {
    CUpti_Profiler_Initialize_Params ip = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    if (!ul_gt_check(g, "cuptiProfilerInitialize", cuptiProfilerInitialize(&ip))) return;
    ul_gt_initialised = 1;
  }
  uint32_t device = 0;
  if (!ul_gt_check(g, "cuptiGetDeviceId", cuptiGetDeviceId(ctx, &device))) return;
  CUpti_Device_GetChipName_Params cn = {CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  cn.deviceIndex = device;
  if (!ul_gt_check(g, "cuptiDeviceGetChipName", cuptiDeviceGetChipName(&cn))) return;
  g->chip = cn.pChipName;
  /* No counter availability image here: reading it while another process samples or profiles the GPU
   * (the run before, while this one is held) fails with CUPTI_ERROR_HARDWARE_BUSY (measured on an
   * H200). The host side is set up without it, and with it after the hold if CUPTI wants it. */
  ul_gt_host(g, NULL, 0);
  ul_gt_prepare_ns += ul_now_ns() - t0;
  ul_gt_ns += ul_now_ns() - t0;
}

/* The host object and the config image for gpu__time_duration; `report`: a failure is the run's error. */
static int ul_gt_host(UlGpuTime *g, const uint8_t *available, int report) {
  CUpti_Profiler_Host_Initialize_Params hi = {CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  hi.pChipName = g->chip;
  hi.pCounterAvailabilityImage = available;
  CUptiResult r = cuptiProfilerHostInitialize(&hi);
  if (r != CUPTI_SUCCESS) return report ? ul_gt_check(g, "cuptiProfilerHostInitialize", r) : 0;
  g->host = hi.pHostObject;
  CUpti_Profiler_Host_ConfigAddMetrics_Params am = {CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  am.pHostObject = g->host;
  am.ppMetricNames = ul_gt_metrics;
  am.numMetrics = 1;
  if (!ul_gt_check(g, "cuptiProfilerHostConfigAddMetrics", cuptiProfilerHostConfigAddMetrics(&am))) return 0;
  CUpti_Profiler_Host_GetConfigImageSize_Params cs = {CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  cs.pHostObject = g->host;
  if (!ul_gt_check(g, "cuptiProfilerHostGetConfigImageSize", cuptiProfilerHostGetConfigImageSize(&cs))) return 0;
  g->config_size = cs.configImageSize;
  g->config = (uint8_t *)malloc(g->config_size);
  CUpti_Profiler_Host_GetConfigImage_Params gi = {CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  gi.pHostObject = g->host;
  gi.configImageSize = g->config_size;
  gi.pConfigImage = g->config;
  if (!g->config || !ul_gt_check(g, "cuptiProfilerHostGetConfigImage", cuptiProfilerHostGetConfigImage(&gi))) return 0;
  CUpti_Profiler_Host_GetNumOfPasses_Params np = {CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  np.configImageSize = g->config_size;
  np.pConfigImage = g->config;
  if (!ul_gt_check(g, "cuptiProfilerHostGetNumOfPasses", cuptiProfilerHostGetNumOfPasses(&np))) return 0;
  if (np.numOfPasses != 1) {
    /* a replayed kernel would run more than once: not the program as itself */
    ul_gt_check(g, "gpu__time_duration needs more than one pass on this GPU", CUPTI_ERROR_NOT_SUPPORTED);
    return 0;
  }
  g->prepared = 1;
  return 1;
}

static UlGpuTime *ul_gt_context(CUcontext ctx) {
  for (int i = 0; i < UL_MAX_CONTEXTS; ++i)
    if (ul_gt[i].ctx == ctx) return &ul_gt[i];
  return NULL;
}

/* The profiler on, on the GPU, once the run has the GPU (after any hold): from this launch on, one range each. */
static void ul_gt_enable(CUcontext ctx) {
  UlGpuTime *g = ul_gt_context(ctx);
  if (!g || !g->chip || g->object || g->failed) return;
  uint64_t t0 = ul_now_ns();
  if (!g->prepared) {
    /* CUPTI wanted the counter availability image: read now that the GPU is this run's */
    CUpti_Profiler_GetCounterAvailability_Params ca = {CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
    ca.ctx = ctx;
    if (!ul_gt_check(g, "cuptiProfilerGetCounterAvailability (size)", cuptiProfilerGetCounterAvailability(&ca))) return;
    uint8_t *available = (uint8_t *)malloc(ca.counterAvailabilityImageSize);
    ca.pCounterAvailabilityImage = available;
    int ok = available && ul_gt_check(g, "cuptiProfilerGetCounterAvailability", cuptiProfilerGetCounterAvailability(&ca)) &&
             ul_gt_host(g, available, 1);
    free(available);
    if (!ok) return;
  }
  CUpti_RangeProfiler_Enable_Params en = {CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
  en.ctx = ctx;
  if (!ul_gt_check(g, "cuptiRangeProfilerEnable", cuptiRangeProfilerEnable(&en))) return;
  g->object = en.pRangeProfilerObject;
  CUpti_RangeProfiler_GetCounterDataSize_Params ds = {CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
  ds.pRangeProfilerObject = g->object;
  ds.pMetricNames = ul_gt_metrics;
  ds.numMetrics = 1;
  ds.maxNumOfRanges = UL_GT_RANGES;
  ds.maxNumRangeTreeNodes = UL_GT_RANGES;
  if (!ul_gt_check(g, "cuptiRangeProfilerGetCounterDataSize", cuptiRangeProfilerGetCounterDataSize(&ds))) return;
  g->data_size = ds.counterDataSize;
  g->data = (uint8_t *)malloc(g->data_size);
  if (!g->data) {
    ul_gt_check(g, "counter data image", CUPTI_ERROR_OUT_OF_MEMORY);
    return;
  }
  ul_gt_start(g);
  ul_gt_enable_ns += ul_now_ns() - t0;
  ul_gt_ns += ul_now_ns() - t0;
}

/* Stops the pass, writes every range's gpu__time_duration, and starts again unless the context goes. */
static void ul_gt_collect(UlGpuTime *g, int restart) {
  if (!g->running || g->failed) return;
  uint64_t t0 = ul_now_ns();
  g->running = 0;
  CUpti_RangeProfiler_Stop_Params sp = {CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
  sp.pRangeProfilerObject = g->object;
  if (!ul_gt_check(g, "cuptiRangeProfilerStop", cuptiRangeProfilerStop(&sp))) return;
  CUpti_RangeProfiler_DecodeData_Params dd = {CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
  dd.pRangeProfilerObject = g->object;
  if (!ul_gt_check(g, "cuptiRangeProfilerDecodeData", cuptiRangeProfilerDecodeData(&dd))) return;
  ul_gt_dropped += dd.numOfRangeDropped;
  CUpti_RangeProfiler_GetCounterDataInfo_Params di = {CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
  di.pCounterDataImage = g->data;
  di.counterDataImageSize = g->data_size;
  if (!ul_gt_check(g, "cuptiRangeProfilerGetCounterDataInfo", cuptiRangeProfilerGetCounterDataInfo(&di))) return;
  for (size_t r = 0; r < di.numTotalRanges; ++r) {
    double value = 0;
    CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    ev.pHostObject = g->host;
    ev.pCounterDataImage = g->data;
    ev.counterDataImageSize = g->data_size;
    ev.rangeIndex = r;
    ev.ppMetricNames = ul_gt_metrics;
    ev.numMetrics = 1;
    ev.pMetricValues = &value;
    if (!ul_gt_check(g, "cuptiProfilerHostEvaluateToGpuValues", cuptiProfilerHostEvaluateToGpuValues(&ev))) return;
    if (ul_out) {
      fprintf(ul_out, "{\"gt\":%.1f,\"gi\":%llu}\n", value, ul_gt_index);
    }
    ++ul_gt_index;
  }
  if (ul_out) fflush(ul_out);
  if (restart) ul_gt_start(g);
  ul_gt_ns += ul_now_ns() - t0;
}

static void ul_gt_finish(UlGpuTime *g) {
  if (!g->ctx || !g->object) return;
  ul_gt_collect(g, 0);
  CUpti_RangeProfiler_Disable_Params dp = {CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
  dp.pRangeProfilerObject = g->object;
  ul_gt_check(g, "cuptiRangeProfilerDisable", cuptiRangeProfilerDisable(&dp));
  g->object = NULL;
}
#else
/* CUPTI before CUDA 12.6 has no range profiler: the kernel records alone time the run. */
typedef struct {
  int running;
  unsigned pending;
} UlGpuTime;
static int ul_gt_mode = 0;
static UlGpuTime ul_gt[UL_MAX_CONTEXTS];
static unsigned long long ul_gt_index = 0, ul_gt_dropped = 0;
static uint64_t ul_gt_ns = 0, ul_gt_prepare_ns = 0, ul_gt_enable_ns = 0;
static int ul_gt_check(UlGpuTime *g, const char *what, CUptiResult r) {
  (void)g;
  if (ul_out) fprintf(ul_out, "{\"gterror\":\"%s: CUPTI %d\"}\n", what, (int)r);
  return 0;
}
static void ul_gt_prepare(CUcontext ctx) { (void)ctx; }
static void ul_gt_enable(CUcontext ctx) { (void)ctx; }
static void ul_gt_collect(UlGpuTime *g, int restart) { (void)g, (void)restart; }
static void ul_gt_finish(UlGpuTime *g) { (void)g; }
static UlGpuTime *ul_gt_context(CUcontext ctx) { (void)ctx; return NULL; }
#endif

/* A context about to go (cudaDeviceReset, the program's own teardown): its records first. */
static void CUPTIAPI ul_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void *data) {
  (void)userdata;
  if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
    const CUpti_ResourceData *rd = (const CUpti_ResourceData *)data;
    if (id == CUPTI_CBID_RESOURCE_CONTEXT_CREATED && ul_pc_period) {
      /* a run started ahead samples only once let go: two processes sampling one GPU at once made the
       * other's cuptiPCSamplingGetData fail with CUPTI_ERROR_UNKNOWN (measured on an H100) */
      if (ul_hold && !ul_pc_pending) ul_pc_pending = rd->context;
      else ul_pc_start(rd->context);
    }
    else if (id == CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING && ul_pc_period) {
      /* PCs are unique only until their module goes: take them now */
      UlSamplingContext *c = ul_context(rd->context);
      if (c) ul_pc_drain(c);
    } else if (id == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
      CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
      if (r != CUPTI_SUCCESS) ul_error("cuptiActivityFlushAll (context destroy)", r);
      UlSamplingContext *c = ul_context(rd->context);
      if (c) ul_pc_finish(c);
      UlGpuTime *g = ul_gt_context(rd->context);
      if (g) ul_gt_finish(g);
    }
  } else if (domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    const CUpti_CallbackData *cd = (const CUpti_CallbackData *)data;
    if (cd->callbackSite == CUPTI_API_ENTER && ul_gt_mode) ul_gt_prepare(cd->context);
    if (cd->callbackSite == CUPTI_API_ENTER && ul_hold) {
      /* the first launch: wait for the GPU to be ours (polling each 0.2 ms; the runner's timeout bounds it) */
      const char *hold = ul_hold;
      ul_hold = NULL;
      uint64_t t0 = ul_now_ns();
      struct timespec nap = {0, 200000};
      while (access(hold, F_OK) != 0) nanosleep(&nap, NULL);
      if (ul_out) {
        fprintf(ul_out, "{\"held\":%llu}\n", (unsigned long long)(ul_now_ns() - t0));
        fflush(ul_out);
      }
      if (ul_pc_pending) {
        ul_pc_start(ul_pc_pending);
        ul_pc_pending = NULL;
      }
    }
    if (ul_gt_mode) {
      /* the profiler on from the context's first launch; its ranges read before they run out */
      if (cd->callbackSite == CUPTI_API_ENTER) ul_gt_enable(cd->context);
      UlGpuTime *g = cd->callbackSite == CUPTI_API_EXIT ? ul_gt_context(cd->context) : NULL;
      if (g && g->running && ++g->pending >= UL_GT_RANGES) ul_gt_collect(g, 1);
    }
    /* after a launch, now and then: CUPTI's parsed PCs into the table before its buffer fills */
    if (cd->callbackSite != CUPTI_API_EXIT || !ul_pc_period) return;
    uint64_t now = ul_now_ns();
    if (now - ul_last_drain < UL_DRAIN_NS) return;
    ul_last_drain = now;
    UlSamplingContext *c = ul_context(cd->context);
    if (c) ul_pc_drain(c);
  }
}

static void ul_at_exit(void) {
  if (ul_finished) return;
  ul_finished = 1;
  /* before the runtime's teardown (atexit handlers run first): contexts are still alive */
  uint64_t t0 = ul_now_ns();
  for (int i = 0; i < UL_MAX_CONTEXTS; ++i) ul_pc_finish(&ul_contexts[i]);
  ul_pc_finish_ns += ul_now_ns() - t0;
  for (int i = 0; i < UL_MAX_CONTEXTS; ++i) ul_gt_finish(&ul_gt[i]);
  if (ul_out && ul_gt_mode)
    fprintf(ul_out, "{\"gtend\":1,\"ranges\":%llu,\"dropped\":%llu,\"prepareMs\":%.1f,\"enableMs\":%.1f,\"hostMs\":%.1f}\n", ul_gt_index,
            ul_gt_dropped, ul_gt_prepare_ns / 1e6, ul_gt_enable_ns / 1e6, ul_gt_ns / 1e6);
  CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (r != CUPTI_SUCCESS) ul_error("cuptiActivityFlushAll (exit)", r);
  ul_pc_write();
  if (ul_out) {
    fprintf(ul_out, "{\"end\":1,\"records\":%llu,\"dropped\":%llu}\n", ul_records, ul_dropped);
    fclose(ul_out);
    ul_out = NULL;
  }
}

/* Built as C++ (cupti_profiler_host.h includes <string>); the driver looks this name up unmangled. */
#ifdef __cplusplus
extern "C"
#endif
int InitializeInjection(void) {
  const char *path = getenv("UNROLL_LENS_TIMER_OUT");
  if (!path || !*path) return 1; /* nothing asked for: load, record nothing */
  ul_out = fopen(path, "a");
  if (!ul_out) return 1;
  if (cuptiGetTimestamp(&ul_base) != CUPTI_SUCCESS) ul_base = 0;
  fprintf(ul_out, "{\"init\":1,\"cupti\":%d,\"pid\":%d,\"base\":\"%llu\"}\n", CUPTI_API_VERSION, (int)getpid(),
          (unsigned long long)ul_base);
  fflush(ul_out);
  CUptiResult r = cuptiActivityRegisterCallbacks(ul_buffer_requested, ul_buffer_completed);
  if (r != CUPTI_SUCCESS) {
    ul_error("cuptiActivityRegisterCallbacks", r);
    return 1;
  }
  /* The serialized kernel kind, not CONCURRENT_KERNEL: before Blackwell (no HW trace) CUPTI times a
   * concurrent-kernel record by instrumenting the kernel, which costs per thread block. Measured on an
   * H100: reduce_interleaved (524,288 blocks) ran 0.641 ms with CONCURRENT_KERNEL against 0.603–0.607 ms
   * plain, under ncu and with this kind (the program's own cudaEvent time rose the same way); kernels
   * of 65,536 blocks did not move. Serialized, kernels run one at a time, as under ncu. */
  r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_KERNEL);
  if (r != CUPTI_SUCCESS) {
    ul_error("cuptiActivityEnable(KERNEL)", r);
    return 1;
  }
  const char *period = getenv("UNROLL_LENS_PCSAMPLING");
  if (period && *period) {
    int p = atoi(period);
    if (p >= 5 && p <= 31) ul_pc_period = p;
    else ul_pc_error("UNROLL_LENS_PCSAMPLING must be 5..31", CUPTI_ERROR_INVALID_PARAMETER);
    const char *mb = getenv("UNROLL_LENS_PC_HW_BUFFER_MB"), *sleep = getenv("UNROLL_LENS_PC_SLEEP_MS");
    if (mb && atoi(mb) > 0) ul_pc_hw_buffer_mb = (size_t)atoi(mb);
    if (sleep && atoi(sleep) > 0) ul_pc_sleep_ms = (unsigned)atoi(sleep);
  }
  CUpti_SubscriberHandle subscriber;
  r = cuptiSubscribe(&subscriber, (CUpti_CallbackFunc)ul_callback, NULL);
  if (r == CUPTI_SUCCESS) r = cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
  if (r != CUPTI_SUCCESS) ul_error("cuptiSubscribe (context destroy)", r);
  const char *hold = getenv("UNROLL_LENS_HOLD");
  if (hold && *hold) ul_hold = hold;
  const char *gpu_time = getenv("UNROLL_LENS_GPU_TIME");
#ifdef UL_HAVE_RANGE_PROFILER
  if (gpu_time && strcmp(gpu_time, "1") == 0) ul_gt_mode = 1;
#else
  if (gpu_time && strcmp(gpu_time, "1") == 0) ul_gt_check(NULL, "this CUPTI has no range profiler (CUDA 12.6 or newer has)", CUPTI_ERROR_NOT_SUPPORTED);
#endif
  else if (gpu_time && *gpu_time && strcmp(gpu_time, "0") != 0) ul_gt_check(NULL, "UNROLL_LENS_GPU_TIME must be 0 or 1", CUPTI_ERROR_INVALID_PARAMETER);
  if (r == CUPTI_SUCCESS && (ul_pc_period || ul_hold || ul_gt_mode)) {
    static const CUpti_CallbackId launches[] = {
        CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,        CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,      CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
        CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    };
    CUptiResult c = CUPTI_SUCCESS;
    if (ul_pc_period) c = cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED);
    if (c == CUPTI_SUCCESS && ul_pc_period)
      c = cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING);
    for (size_t i = 0; c == CUPTI_SUCCESS && i < sizeof launches / sizeof launches[0]; ++i)
      c = cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API, launches[i]);
    /* a hold that cannot be kept would let two programs share the GPU: the run's times are not trusted */
    if (c != CUPTI_SUCCESS && ul_hold) ul_error("cuptiEnableCallback (hold at the first launch)", c);
    else if (c != CUPTI_SUCCESS && ul_gt_mode) ul_gt_check(NULL, "cuptiEnableCallback (GPU time)", c);
    else if (c != CUPTI_SUCCESS) ul_pc_error("cuptiEnableCallback (PC sampling)", c);
  }
  atexit(ul_at_exit);
  return 1;
}
