#!/bin/bash
# rate.sh BIN CALLS_PER_SHELL: 8 shells each run BIN files //depot/...#head; prints calls/s.
bin=$1; n=$2
start=$(date +%s.%N)
for s in 1 2 3 4 5 6 7 8; do
  ( for ((i=0;i<n;i++)); do "$bin" files '//depot/...#head' >/dev/null || exit 1; done ) &
done
wait
end=$(date +%s.%N)
echo "$bin: $(echo "8*$n/($end-$start)" | bc -l | cut -c1-6) calls/s"
