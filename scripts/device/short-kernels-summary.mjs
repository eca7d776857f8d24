// Prints what scripts/device/short-kernels.sh recorded: for each program, every kernel's median
// from `unroll-lens compare` (default timer) against ncu's gpu__time_duration (--cache-control
// none --clock-control none, the same binary, the same launches: the first 20 after 2 warm-up
// launches of each kernel), the speedups against the first kernel both ways, ncu against itself
// (a second run) and the activity-record fallback against ncu. Targets (issue 42): every median
// within max(1 %, 0.2 µs) and every speedup within 1 % of ncu's. Exit 1 when one misses.
//   node scripts/device/short-kernels-summary.mjs DIR
import fs from 'node:fs';
import path from 'node:path';

const dir = process.argv[2];
const WARMUP = 2;
const SAMPLES = 20;
const median = xs => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/** ncu's raw CSV: medians in µs per mangled kernel, of launches WARMUP..WARMUP+SAMPLES. */
function ncuMedians(file) {
  const lines = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter(l => l.startsWith('"'));
  const rows = lines.map(l => l.slice(1, -1).split('","'));
  const h = rows.findIndex(r => r[0] === 'ID');
  const kn = rows[h].indexOf('Kernel Name');
  const du = rows[h].indexOf('gpu__time_duration.sum');
  const scale = { ns: 1e-3, nsecond: 1e-3, us: 1, usecond: 1, ms: 1e3, msecond: 1e3 }[rows[h + 1][du]];
  const per = new Map();
  for (const r of rows.slice(h + 2)) {
    if (!per.has(r[kn])) per.set(r[kn], []);
    per.get(r[kn]).push(Number(r[du].replace(/,/g, '')) * scale);
  }
  return new Map([...per].map(([k, v]) => [k, median(v.slice(WARMUP, WARMUP + SAMPLES))]));
}

let missed = 0;
const pct = x => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(2)}%`;
for (const p of ['transpose_ladder', 'length_curve']) {
  const f = path.join(dir, `${p}.json`);
  if (!fs.existsSync(f)) continue;
  const ours = JSON.parse(fs.readFileSync(f, 'utf8'));
  const act = fs.existsSync(path.join(dir, `${p}.activity.json`))
    ? JSON.parse(fs.readFileSync(path.join(dir, `${p}.activity.json`), 'utf8'))
    : null;
  const ncu = ncuMedians(path.join(dir, `${p}.ncu.csv`));
  const ncu2 = ncuMedians(path.join(dir, `${p}.ncu2.csv`));
  console.log(`\n${p}: ${ours.gpu}; ours: ${JSON.stringify(ours.measurement)}; fallback: ${JSON.stringify(act?.measurement)}`);
  console.log(
    'kernel                          ours µs   ncu µs  ours−ncu   median  speedup  ncu spd   off    spd  | ncu2−ncu  spd2 off | activity−ncu',
  );
  const base = ours.kernels[0];
  const nb = ncu.get(base.kernel);
  const nb2 = ncu2.get(base.kernel);
  const ab = act?.kernels.find(x => x.kernel === base.kernel);
  for (const k of ours.kernels) {
    const o = k.medianMs * 1000;
    const n = ncu.get(k.kernel);
    const n2 = ncu2.get(k.kernel);
    const a = act?.kernels.find(x => x.kernel === k.kernel);
    const medOk = Math.abs(o - n) <= Math.max(0.01 * n, 0.2);
    const spd = nb / n;
    const spdOff = k.speedup / spd - 1;
    const spdOk = Math.abs(spdOff) <= 0.01;
    if (!medOk || !spdOk) missed++;
    const spd2Off = nb2 / n2 / spd - 1;
    console.log(
      [
        k.kernel
          .replace(/^_Z\d+/, '')
          .slice(0, 30)
          .padEnd(30),
        o.toFixed(3).padStart(9),
        n.toFixed(3).padStart(8),
        (o - n).toFixed(3).padStart(9),
        (medOk ? 'PASS' : 'MISS').padStart(8),
        k.speedup.toFixed(4).padStart(8),
        spd.toFixed(4).padStart(8),
        pct(spdOff).padStart(7),
        (spdOk ? 'PASS' : 'MISS').padStart(6),
        ' |',
        (n2 - n).toFixed(3).padStart(8),
        pct(spd2Off).padStart(9),
        ' |',
        a
          ? `${(a.medianMs * 1000 - n).toFixed(3)} µs (${pct((a.medianMs * 1000) / n - 1)})${a.shortForTimer ? ' !' : ''}; spd ${pct(ab.medianMs / a.medianMs / spd - 1)}`
          : '-',
      ].join(' '),
    );
  }
}
console.log(
  `\nshort-kernels: ${missed ? `${missed} kernel(s) MISS` : 'every median within max(1 %, 0.2 µs) and every speedup within 1 % of ncu'}`,
);
process.exit(missed ? 1 : 0);
