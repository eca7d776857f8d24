// Reads a run of scripts/device/run-short-kernels.sh (unpacked in DIR) and prints, per program,
// mode and round, each kernel's median (ns) of its 20 timed launches and its difference from ncu's
// gpu__time_duration median in the same round, and the speedups against the program's first kernel.
// Launches are matched by order: each kernel runs one check launch then 20 timed launches, in the
// same order in every mode (the programs are ours: scripts/device/short-kernels/).
// Usage: node scripts/measure/short-kernels.mjs DIR
import fs from 'node:fs';
import path from 'node:path';
const dir = process.argv[2];
const PER = 21;
const median = a => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const lines = f => fs.readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean);
const activity = f =>
  lines(f)
    .map(l => JSON.parse(l))
    .filter(r => 'k' in r)
    .sort((a, b) => a.s - b.s)
    .map(r => r.du);
const gpuTime = f =>
  lines(f)
    .map(l => JSON.parse(l))
    .filter(r => 'gt' in r)
    .sort((a, b) => a.gi - b.gi)
    .map(r => r.gt);
const ncu = f =>
  lines(f)
    .filter(l => l.startsWith('"') && l.includes('gpu__time_duration.sum'))
    .map(l => Number(l.split('","').at(-1).replace(/[",]/g, '')));
const names = f =>
  lines(f)
    .filter(l => l.startsWith('kernel='))
    .map(l => l.split(' ')[0].slice(7));
const perKernel = durations => {
  const out = [];
  for (let i = 0; i + PER <= durations.length; i += PER) out.push(median(durations.slice(i + 1, i + PER)));
  return out;
};
for (const program of ['transpose_ladder', 'kernel_lengths']) {
  for (const round of [1, 2, 3]) {
    if (!fs.existsSync(path.join(dir, `${program}.ncu.${round}.csv`))) continue;
    const kernels = names(`${program}.plain.${round}.stdout`);
    const ref = perKernel(ncu(`${program}.ncu.${round}.csv`));
    const modes = {
      activity: perKernel(activity(`${program}.activity.${round}.jsonl`)),
      pc: perKernel(activity(`${program}.pc.${round}.jsonl`)),
      'gt-kernel': perKernel(gpuTime(`${program}.gt-kernel.${round}.jsonl`)),
      'gt-user': perKernel(gpuTime(`${program}.gt-user.${round}.jsonl`)),
      'gt-user-pc': perKernel(gpuTime(`${program}.gt-user-pc.${round}.jsonl`)),
      'act(gt-user)': perKernel(activity(`${program}.gt-user.${round}.jsonl`)),
    };
    console.log(`\n${program} round ${round}: median ns (difference from ncu)`);
    console.log(['kernel', 'ncu', ...Object.keys(modes)].join('\t'));
    kernels.forEach((k, i) => {
      const cells = Object.values(modes).map(
        m => `${m[i]} (${m[i] - ref[i] >= 0 ? '+' : ''}${(((m[i] - ref[i]) / ref[i]) * 100).toFixed(1)}%)`,
      );
      console.log([k, ref[i], ...cells].join('\t'));
    });
    console.log("speedup vs first, difference from ncu's speedup:");
    const worst = {};
    for (const [mode, m] of Object.entries(modes)) {
      worst[mode] = Math.max(...kernels.map((_, i) => Math.abs(m[0] / m[i] / (ref[0] / ref[i]) - 1) * 100));
    }
    console.log(
      Object.entries(worst)
        .map(([k, v]) => `${k} ${v.toFixed(2)}%`)
        .join('  '),
    );
  }
}
