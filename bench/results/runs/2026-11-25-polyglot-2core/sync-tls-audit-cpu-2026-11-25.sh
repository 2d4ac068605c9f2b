#!/usr/bin/env bash
# Server CPU time (utime+stime ticks, 100/s) of one `keel bench sync` run, dataset generated
# first and not counted: plain / TLS / plain+audit interleaved; roots and workspaces on /dev/shm.
set -u
K=${KEEL:-target/release/keel}
OUT=${OUT:-/dev/shm/sync-tls-audit-cpu.jsonl}
: > $OUT
cpu() { awk '{print $14+$15}' /proc/$1/stat; }
for i in 1 2 3 4 5; do
  for shape in small bulk; do
    case $shape in
      small) gen="--files 3400 --file-size 4096"; run="--clients 8 --rounds 4";;
      bulk) gen="--files 1024 --file-size 262144"; run="--clients 4 --rounds 2";;
    esac
    for mode in plain tls audit; do
      d=/dev/shm/tlsc/$mode-$i; rm -rf /dev/shm/tlsc; mkdir -p $d/w
      listen=127.0.0.1:0; extra=()
      case $mode in
        tls) listen=ssl:127.0.0.1:0;;
        audit) extra=(--audit-log $d/audit.log);;
      esac
      export KEEL_TRUST=$d/trust
      RUST_LOG=warn $K serve --root $d/root --listen $listen "${extra[@]}" > $d/out 2> $d/err &
      pid=$!
      for t in $(seq 1 100); do grep -q listening $d/out 2>/dev/null && break; sleep 0.1; done
      addr=$(awk '{print $5}' $d/out)
      [ $mode = tls ] && $K -s $addr trust -y > /dev/null
      $K bench --json --server $addr generate --shape sync $gen > /dev/null 2>&1
      before=$(cpu $pid)
      line=$($K bench --json --server $addr --skip-generate sync $gen $run --work-dir $d/w 2>/dev/null | tail -1)
      after=$(cpu $pid)
      kill $pid; wait $pid 2>/dev/null
      lines=0; [ -f $d/audit.log ] && lines=$(wc -l < $d/audit.log)
      echo "{\"run\":$i,\"shape\":\"$shape\",\"mode\":\"$mode\",\"server_cpu_ticks\":$((after-before)),\"audit_lines\":$lines,\"load\":\"$(cut -d' ' -f1 /proc/loadavg)\",\"result\":$line}" >> $OUT
    done
  done
done
rm -rf /dev/shm/tlsc

