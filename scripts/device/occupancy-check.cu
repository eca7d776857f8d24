// Resident warps per SM of the launch-style fixtures (test/fixtures/launch-styles/*.cu), from the
// CUDA runtime's own occupancy calculator on the GPU at hand: the independent truth for issue 22's
// "warps per SM from the code people write" (test/unit/launchStyles.test.ts checks the product
// against cuda_occupancy.h's rules written out in TypeScript; this checks both against the driver).
//
// For each fixture it computes what the fixture's main() launches on this GPU (grid, block,
// dynamic shared memory, written out here again), asks cudaOccupancyMaxActiveBlocksPerMultiprocessor
// how many blocks of the fixture's kernel fit an SM, and prints one JSON object per fixture:
//   warpsPerSm = min(ceil(grid / SMs), blocks that fit) x warps per block.
//
// Build and run (any machine with nvcc; running needs a GPU):
//   nvcc -arch=sm_90 -O2 -o /tmp/occupancy-check scripts/device/occupancy-check.cu
//   /tmp/occupancy-check > occupancy-check.json
// Compare with the product:
//   node bin/unroll-lens.js sass test/fixtures/launch-styles/FILE.cu --loop LINE --factors 1 --json
//   (icache.warpsPerSm / icache.warpsSource), or the table in test/unit/launchStyles.test.ts.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>

// Each fixture in its own namespace, its main() renamed (the headers above are already included).
#define main fixture_main
namespace local_int {
#include "../../test/fixtures/launch-styles/local_int.cu"
}
namespace dim3_props {
#include "../../test/fixtures/launch-styles/dim3_props.cu"
}
namespace constexpr_sms {
#include "../../test/fixtures/launch-styles/constexpr_sms.cu"
}
namespace macro_grid {
#include "../../test/fixtures/launch-styles/macro_grid.cu"
}
#undef BLOCK
#undef GRID
namespace dynamic_smem {
#include "../../test/fixtures/launch-styles/dynamic_smem.cu"
}
namespace launch_kernel_ex {
#include "../../test/fixtures/launch-styles/launch_kernel_ex.cu"
}
namespace occupancy_blocks {
#include "../../test/fixtures/launch-styles/occupancy_blocks.cu"
}
namespace occupancy_potential {
#include "../../test/fixtures/launch-styles/occupancy_potential.cu"
}
namespace helper_params {
#include "../../test/fixtures/launch-styles/helper_params.cu"
}
namespace two_block_sizes {
#include "../../test/fixtures/launch-styles/two_block_sizes.cu"
}
namespace runtime_grid {
#include "../../test/fixtures/launch-styles/runtime_grid.cu"
}
namespace launch_bounds_api {
#include "../../test/fixtures/launch-styles/launch_bounds_api.cu"
}
#undef CHAINS
namespace register_heavy {
#include "../../test/fixtures/launch-styles/register_heavy.cu"
}
#undef main

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e_));                              \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static int g_first = 1;

template <typename K>
static void report(const char *fixture, const char *kernelName, K kernel, long long grid, int threads, size_t smem, int sms,
                   const char *note)
{
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, (const void *)kernel));
    int fit = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, kernel, threads, smem));
    long long launched = (grid + sms - 1) / sms;
    long long blocks = launched < fit ? launched : fit;
    int warpsPerBlock = (threads + 31) / 32;
    printf("%s  {\"fixture\": \"%s\", \"kernel\": \"%s\", \"grid\": %lld, \"threads\": %d, \"dynamicSmem\": %zu, \"sms\": %d, "
           "\"registers\": %d, \"staticSmem\": %zu, \"blocksFit\": %d, \"blocksPerSm\": %lld, \"warpsPerSm\": %lld, \"note\": \"%s\"}",
           g_first ? "" : ",\n", fixture, kernelName, grid, threads, smem, sms, attr.numRegs, attr.sharedSizeBytes, fit, blocks,
           blocks * warpsPerBlock, note);
    g_first = 0;
}

int main()
{
    int device = 0, sms = 0;
    CHECK(cudaGetDevice(&device));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, device));
    printf("{\"gpu\": \"%s\", \"sms\": %d, \"cc\": \"%d.%d\", \"fixtures\": [\n", prop.name, sms, prop.major, prop.minor);

    report("local_int.cu", "step", local_int::step, sms, 128, 0, sms, "");
    report("dim3_props.cu", "step", dim3_props::step, 2LL * sms, 32 * 4, 0, sms, "");
    report("constexpr_sms.cu", "step", constexpr_sms::step, 4LL * sms, 256, 0, sms, "");
    report("macro_grid.cu", "step", macro_grid::step, 3 * 132, 512, 0, sms, "constant grid: depends on the SM count");
    report("dynamic_smem.cu", "step", dynamic_smem::step, 8LL * sms, 64, 48 * 1024, sms, "");
    report("launch_kernel_ex.cu", "step", launch_kernel_ex::step, 2LL * sms, 96, 0, sms, "");
    {
        int numBlocks = 0;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&numBlocks, occupancy_blocks::step, 128, 0));
        report("occupancy_blocks.cu", "step", occupancy_blocks::step, (long long)numBlocks * sms, 128, 0, sms, "");
    }
    {
        int minGrid = 0, block = 0;
        CHECK(cudaOccupancyMaxPotentialBlockSize(&minGrid, &block, occupancy_potential::step, 0, 0));
        report("occupancy_potential.cu", "step", occupancy_potential::step, minGrid, block, 0, sms, "block from cudaOccupancyMaxPotentialBlockSize");
    }
    report("helper_params.cu", "step", helper_params::step, sms, 192, 0, sms, "");
    report("two_block_sizes.cu", "step", two_block_sizes::step, sms, 256, 0, sms, "without arguments (wide): 256; with one: 128");
    report("two_block_sizes.cu", "step", two_block_sizes::step, sms, 128, 0, sms, "with an argument: 128");
    report("runtime_grid.cu", "step", runtime_grid::step, ((1LL << 22) + 127) / 128, 128, 0, sms, "default n = 1 << 22");
    report("launch_bounds_api.cu", "bounded", launch_bounds_api::bounded, 4LL * sms, 256, 0, sms, "");
    report("register_heavy.cu", "heavy", register_heavy::heavy, 8LL * sms, 256, 0, sms, "");
    printf("\n]}\n");
    return 0;
}
