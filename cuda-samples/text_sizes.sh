#!/usr/bin/env bash
# Print the machine-code size (.text.<kernel> section of the cubin) of every
# kernel in the given .cu files, for one GPU architecture. Needs nvcc and
# readelf (binutils); no GPU and no cuobjdump required.
#
# usage: ./text_sizes.sh [-arch sm_90] [extra nvcc flags...] file.cu [file.cu ...]
#   e.g. ./text_sizes.sh icache_cliff.cu
#        ./text_sizes.sh -arch sm_90 -DBLOCK=512 reduce_unroll.cu
set -euo pipefail

arch=sm_90
flags=()
files=()
while [ $# -gt 0 ]; do
    case "$1" in
        -arch) arch="$2"; shift 2 ;;
        -arch=*) arch="${1#-arch=}"; shift ;;
        *.cu) files+=("$1"); shift ;;
        *) flags+=("$1"); shift ;;
    esac
done
[ ${#files[@]} -gt 0 ] || { echo "usage: $0 [-arch sm_XX] [nvcc flags] file.cu..." >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "${files[@]}"; do
    cubin="$tmp/$(basename "$f" .cu).cubin"
    nvcc -O3 -arch="$arch" -cubin ${flags[@]+"${flags[@]}"} -o "$cubin" "$f"
    echo "# $f ($arch${flags[*]:+ ${flags[*]}})"
    # Section lines look like: [16] .text._Z12matmul_basicPKfS0_Pfi PROGBITS addr off size ...
    readelf -SW "$cubin" 2>/dev/null | awk '$2 ~ /^\.text\./ { print $2, $6 }' |
        while read -r name hexsize; do
            printf '%10d  %s\n' "$((16#$hexsize))" "${name#.text.}"
        done
done
