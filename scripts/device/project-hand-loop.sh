# The hand loop a bench replaces, for the device scripts (sourced): per factor, edit the loop's
# pragma, rebuild with the project's command, run under `ncu -k`; times printed per step.
# Needs $W (scratch folder) and now() from the caller.
hand_loop() { # hand_loop DIR FILE LINE BUILD RUN KERNELREGEX FACTORS…
  local dir=$1 file=$2 line=$3 build=$4 run=$5 k=$6; shift 6
  cp "$dir/$file" "$W/hand-orig"
  for f in as-written "$@"; do
    cp "$W/hand-orig" "$dir/$file"
    if [ "$f" != as-written ]; then
      local p="#pragma unroll $f"; [ "$f" = full ] && p="#pragma unroll"
      # the loop's own pragma (the line above it) is replaced; a loop without one gets it inserted
      if sed -n "$((line - 1))p" "$dir/$file" | grep -q '#pragma unroll'; then sed -i "$((line - 1))s/.*/$p/" "$dir/$file"
      else sed -i "${line}i $p" "$dir/$file"; fi
    fi
    local t0; t0=$(now)
    (cd "$dir" && sh -c "$build") > "$W/hand-build-$f.log" 2>&1 || echo "hand build $f failed"
    local t1; t1=$(now)
    (cd "$dir" && ncu -k "regex:$k" --launch-count 20 sh -c "$run") > "$W/hand-ncu-$f.log" 2>&1 || echo "hand ncu $f exit $?"
    local t2; t2=$(now)
    echo "hand $f build $(awk "BEGIN{print $t1 - $t0}") s ncu $(awk "BEGIN{print $t2 - $t1}") s"
  done
  cp "$W/hand-orig" "$dir/$file"
}
