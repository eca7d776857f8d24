#!/usr/bin/env node
// `npm run demo`: the main job on the bundled cuda-samples/, as far as this machine allows:
// scan every sample; with nvcc, the SASS of each unroll factor of two loops and the predicted
// instruction-cache penalty of a third; with a GPU (timed by the default CUPTI timer: no Nsight
// Compute needed), the benchmark of the instruction-cache cliff sample; last, a two-loop sweep of
// matvec (timed on the GPU where there is one, SASS only otherwise) with its HTML report.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureCudaTools } from './cuda-tools.mjs';

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
// Effective unroll and per-loop SASS need nvdisasm's line table: where the toolkit has no
// disassembler (nvcc-only installs), fetch it as `npm test` does, into .tools/.
ensureCudaTools();
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
run("the instruction-cache model: each variant's predicted slowdown before any GPU run (4 FFMA chains, 4 warps/SM)", [
  'sass',
  'cuda-samples/icache_ilp.cu',
  '--loop',
  '64',
  '--factors',
  '16,64,full',
]);
// The default timer is Unroll Lens' own CUPTI timer: a GPU is all the bench needs (ncu is optional).
const gpu = has('nvidia-smi') && spawnSync('nvidia-smi', ['-L'], { encoding: 'utf8' }).stdout?.includes('GPU');
if (!gpu) {
  console.log(
    '\nNo GPU here: `unroll-lens bench` (timing, correctness, stall reasons) needs one. docs/measurements.md shows its output on an H100.',
  );
} else {
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
}
const report = path.join(root, '.test-artifacts', 'demo-sweep.html');
fs.mkdirSync(path.dirname(report), { recursive: true });
run(`sweep both loops of a kernel together (${gpu ? 'timed on the GPU' : 'SASS only: no GPU here'}), coordinate search`, [
  'sweep',
  'cuda-samples/matvec.cu',
  '--kernel',
  'matvec_warp_per_row',
  '--loops',
  '70,74',
  '--factors',
  'default,1,2,4,8,16,full',
  '--strategy',
  'coordinate',
  '--args',
  '--only matvec_warp_per_row --reps 25',
  '--report',
  report,
]);
console.log(`\nThe sweep's report (the editor's results panel, offline): ${path.relative(process.cwd(), report)}`);
