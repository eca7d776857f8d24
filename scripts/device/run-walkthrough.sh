#!/usr/bin/env bash
# Issue 27 check on the GPU machine (as root): what the Get Started walkthrough's checks and the
# language status item say there, for root and for an ordinary user (nobody), and the walkthrough's
# first benchmark (walkthrough/sample/first_benchmark.cu, its tap loop, the default factors and
# timer) with the real CLI. Output kept in test/fixtures/gpu/h100/walkthrough/.
# The caller carries .device/node.xz and .device/walk-cli: `node scripts/device/bundle-cli.mjs
# .device/walk-cli`, the sample copied beside it, and info.js, an esbuild bundle of a script that
# prints toolchainInfo(surveyToolchain(), probeCounterPermission(), DEFAULT_SETTINGS, the GPU's arch).
set -o pipefail
W=.device/walk-cli
mkdir -p /tmp/ul-node; xz -dc .device/node.xz > /tmp/ul-node/node && chmod +x /tmp/ul-node/node
export PATH=/tmp/ul-node:/usr/local/cuda/bin:$PATH
node $W/info.js > $OUT/info-root.json
cp -r $W /tmp/wc; chmod -R a+rX /tmp/wc /tmp/ul-node
su -s /bin/sh nobody -c "PATH=$PATH HOME=/tmp node /tmp/wc/info.js" > $OUT/info-nobody.json 2>&1
cd $W
timeout 420 node unroll-lens.js bench first_benchmark.cu --loop 43 --json > $OUT/bench.json 2> $OUT/bench.stderr
echo "bench exit $?"
node -e "const r=JSON.parse(require('fs').readFileSync('$OUT/bench.json','utf8'));for(const v of r.variants)console.log([v.label,v.status,v.kernelInstructions,v.samples,v.medianMs&&v.medianMs.toFixed(4),v.iqrMs&&v.iqrMs.toFixed(4),v.speedup&&v.speedup.toFixed(2),v.withinNoise,v.message||''].join(' | '))" | tee $OUT/bench.table.txt
