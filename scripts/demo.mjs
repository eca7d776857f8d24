#!/usr/bin/env node
// `npm run demo`: the main job on the bundled cuda-samples/, as far as this machine allows:
// scan every sample; with nvcc, the SASS of each unroll factor of two loops; with a GPU and
// Nsight Compute, the benchmark of the instruction-cache cliff sample.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const cli = path.join(root, 'bin', 'unroll-lens.js');
const run = (title, args) => {
  console.log(`\n$ unroll-lens ${args.join(' ')}    # ${title}`);
  return spawnSync(process.execPath, [cli, ...args], { cwd: root, stdio: 'inherit' }).status;
};
const has = tool => spawnSync('sh', ['-c', 'command -v "$1"', 'sh', tool], { stdio: 'ignore' }).status === 0;

run('every kernel, loop, pragma, trip count and manual unroll', ['scan', 'cuda-samples']);
if (!has('nvcc') && !process.env.CUDA_HOME) {
  console.log('\nnvcc not found: install the CUDA Toolkit to see the SASS of each unroll factor.');
  process.exit(0);
}
run('what nvcc really does with a runtime-trip-count loop', ['sass', 'cuda-samples/matmul_unroll.cu', '--loop', '51']);
run('the instruction-cache cliff: code size per unroll factor', [
  'sass',
  'cuda-samples/icache_cliff.cu',
  '--loop',
  '72',
  '--factors',
  '1,4,16,64,full',
  '--kernel',
  '_Z8hot_loopILi2048EEvPKmPmi',
]);
const gpu = has('nvidia-smi') && spawnSync('nvidia-smi', ['-L'], { encoding: 'utf8' }).stdout?.includes('GPU');
if (!gpu || !has('ncu')) {
  console.log(
    '\nNo GPU with Nsight Compute here: `unroll-lens bench` (timing, correctness, stall reasons) needs one. docs/measurements.md shows its output on an H100.',
  );
  process.exit(0);
}
run('time and profile each unroll factor on the GPU', [
  'bench',
  'cuda-samples/icache_cliff.cu',
  '--loop',
  '72',
  '--factors',
  '1,4,16,full',
  '--kernel',
  '_Z8hot_loopILi2048EEvPKmPmi',
  '--args',
  '--body 2048 --threads 128 --reps 25',
]);
