/*
 * Unroll Lens kernel timer: a CUPTI injection library. The driver loads it into the program when
 * CUDA_INJECTION64_PATH names it and calls InitializeInjection() before the first CUDA call; it
 * then records every kernel's start and end (the Activity API's concurrent-kernel records: the
 * program's kernels are not serialised), its grid, block, registers and shared memory, and writes
 * them as JSON lines to the file UNROLL_LENS_TIMER_OUT names:
 *
 *   {"init":1,"cupti":130001,"pid":123,"base":"1764141234000000000"}
 *   {"k":"_Z6kernelPf","s":1523000,"du":12345,"d":0,"st":7,"g":[64,1,1],"b":[256,1,1],"r":32,"ss":0,"ds":0}
 *   {"error":"cuptiActivityEnable(CONCURRENT_KERNEL): CUPTI_ERROR_..."}
 *   {"end":1,"records":42,"dropped":0}
 *
 * Times are ns: "s" the start after "base" (the CUPTI timestamp when the library started) and "du"
 * the duration, both exact as JSON numbers (a raw timestamp, ~1.7e18, is not: doubles lose its last
 * 8 bits, 0.4 % of a 60 µs kernel). Records are flushed when a context is destroyed and at exit;
 * dropped records and CUPTI errors are written, never hidden. Unroll Lens builds this file with the
 * user's own nvcc (src/engine/profile/native/timerLibrary.ts); it reads nothing else from the
 * environment and writes nothing else.
 */
#include <cupti.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* A context about to go (cudaDeviceReset, the program's own teardown): its records first. */
static void CUPTIAPI ul_callback(void *userdata, CUpti_CallbackDomain domain, CUpti_CallbackId id, const void *data) {
  (void)userdata;
  (void)data;
  if (domain == CUPTI_CB_DOMAIN_RESOURCE && id == CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING) {
    CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (r != CUPTI_SUCCESS) ul_error("cuptiActivityFlushAll (context destroy)", r);
  }
}

static void ul_at_exit(void) {
  if (ul_finished) return;
  ul_finished = 1;
  CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (r != CUPTI_SUCCESS) ul_error("cuptiActivityFlushAll (exit)", r);
  if (ul_out) {
    fprintf(ul_out, "{\"end\":1,\"records\":%llu,\"dropped\":%llu}\n", ul_records, ul_dropped);
    fclose(ul_out);
    ul_out = NULL;
  }
}

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
  r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (r != CUPTI_SUCCESS) {
    ul_error("cuptiActivityEnable(CONCURRENT_KERNEL)", r);
    return 1;
  }
  CUpti_SubscriberHandle subscriber;
  r = cuptiSubscribe(&subscriber, (CUpti_CallbackFunc)ul_callback, NULL);
  if (r == CUPTI_SUCCESS) r = cuptiEnableCallback(1, subscriber, CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_DESTROY_STARTING);
  if (r != CUPTI_SUCCESS) ul_error("cuptiSubscribe (context destroy)", r);
  atexit(ul_at_exit);
  return 1;
}
