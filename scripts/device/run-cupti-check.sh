#!/usr/bin/env bash
# The final --timer cupti code on a GPU: a cold bench of matmul_basic (empty build cache, the timer
# library built beside the programs) and a GPU sweep with the timer; wall times and medians.
set -u
mkdir -p /tmp/ul-node; xz -dc .device/node.xz > /tmp/ul-node/node && chmod +x /tmp/ul-node/node
export PATH="/tmp/ul-node:$PATH:/usr/local/cuda/bin"
export XDG_CACHE_HOME=$(mktemp -d)
t=$(date +%s.%N)
node .device/cli/unroll-lens.js bench cuda-samples/matmul_unroll.cu --loop 51 --factors default,1,2,4,8,16,full --args "--only matmul_basic --reps 25" --timer cupti --fresh --quiet --json > $OUT/bench-cupti-cold.json; echo "bench cold exit $? wall $(awk -v a="$(date +%s.%N)" -v b="$t" 'BEGIN{printf "%.1f", a-b}') s"
t=$(date +%s.%N)
node .device/cli/unroll-lens.js sweep cuda-samples/matmul_unroll.cu --kernel matmul_basic --loops 51 --factors 1,4,8 --args "--only matmul_basic --reps 25" --timer cupti --fresh --quiet --json > $OUT/sweep-cupti.json; echo "sweep exit $? wall $(awk -v a="$(date +%s.%N)" -v b="$t" 'BEGIN{printf "%.1f", a-b}') s"
node -e "for (const f of ['bench-cupti-cold','sweep-cupti']) { const r=JSON.parse(require('fs').readFileSync(process.env.OUT+'/'+f+'.json','utf8')); console.log(f, JSON.stringify(r.timing||{}), (r.variants||[]).map(v=>(v.label||v.id)+'='+(v.medianMs===null?v.status:(v.medianMs*1000).toFixed(2))).join(' ')) }"
