#!/usr/bin/env bash
# Trains the three translators of docs/seq2seq/ on the bundled Tatoeba pairs, one after the other,
# and writes their logs to results/seq2seq/. Then run scripts/seq2seq_report.py for BLEU, samples
# and the loss-curve figure. One thread each: on a shared 2-core machine more threads were slower.
#   gru          teacher forcing (seed 001's first run)      -> the packaged checkpoint pretrained/gru
#   gru-mixed    mixed training, teacher_forcing_ratio 0.5   -> runs/seq2seq/gru-mixed (not committed)
#   bahdanau     Bahdanau attention decoder, teacher forcing -> the packaged checkpoint pretrained/bahdanau
#                (the recipe of results/performance/: H=256, cosine schedule over 70 epochs, dropout 0.3,
#                label smoothing 0.1; 70 epochs take about 290 s on 1 thread, --time-budget is only a safety cap)
# With arguments, only the named runs are trained: scripts/train_seq2seq.sh bahdanau
set -euo pipefail
cd "$(dirname "$0")/.."
COMMON=(--overwrite --hidden-size 128 --batch-size 64 --learning-rate 0.002 --epochs 40 --time-budget 300 --seed 0 --threads 1 --no-progress)
BAHDANAU=(--overwrite --hidden-size 256 --batch-size 64 --learning-rate 0.002 --epochs 70 --schedule cosine --dropout 0.3 --label-smoothing 0.1 --time-budget 400 --seed 0 --threads 1 --no-progress)
OUT=results/seq2seq
if [ $# -eq 0 ]; then set -- gru gru-mixed bahdanau; fi
mkdir -p "$OUT" runs/seq2seq
for run in "$@"; do
  case "$run" in
    gru) seq2seq-attention train --decoder gru --teacher-forcing-ratio 1.0 --checkpoint src/seq2seq_attention/pretrained/gru "${COMMON[@]}" 2>&1 | tee "$OUT/gru.log" ;;
    gru-mixed) seq2seq-attention train --decoder gru --teacher-forcing-ratio 0.5 --checkpoint runs/seq2seq/gru-mixed "${COMMON[@]}" 2>&1 | tee "$OUT/gru-mixed.log" ;;
    bahdanau) seq2seq-attention train --decoder bahdanau --teacher-forcing-ratio 1.0 --checkpoint src/seq2seq_attention/pretrained/bahdanau "${BAHDANAU[@]}" 2>&1 | tee "$OUT/bahdanau.log" ;;
    *) echo "unknown run $run (choose gru, gru-mixed, bahdanau)" >&2; exit 2 ;;
  esac
done
