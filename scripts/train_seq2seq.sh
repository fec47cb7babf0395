#!/usr/bin/env bash
# Trains the translators of docs/seq2seq/ on the bundled Tatoeba pairs, one after the other, and writes
# their logs to results/seq2seq/. Then run scripts/seq2seq_report.py for BLEU (with 95% bootstrap
# intervals), paired comparisons, samples and the loss-curve figure. One thread each.
# The main held-out split groups pairs by their English sentence (--split by_english, the default);
# the *-by_french runs repeat the same recipes on the split held out by the French side,
# whose held-out targets mostly also occur in training, to show how much that leak inflates BLEU.
#   gru                teacher forcing (the tutorial's first run)  -> the packaged checkpoint pretrained/gru
#   gru-mixed          mixed training, teacher_forcing_ratio 0.5   -> runs/seq2seq/gru-mixed (not committed)
#   bahdanau           Bahdanau attention decoder, teacher forcing -> the packaged checkpoint pretrained/bahdanau
#                      (the walkthrough's architecture with the best recipe found for it on the development split:
#                      scripts/ablation.py, row combo-b32-d0, results/quality/, docs/appendix/recipe.md: H=256,
#                      cosine schedule over 70 epochs, label smoothing 0.1, batch 32, no dropout, within 300 s of
#                      CPU time on 1 thread; the budget ends the schedule a few epochs early)
#   bahdanau-bi        the same recipe with a bidirectional encoder   -> the packaged checkpoint pretrained/bahdanau-bi
#                      (row combo-bi-b32-d0: the best recipe on the development split; a change of architecture,
#                      so it is a second packaged translator and the walkthrough keeps its own)
#   gru-scheduled      gru's recipe with scheduled sampling: the teacher-forcing ratio decays as
#                      10 / (10 + exp(epoch / 10)) (--teacher-forcing-schedule inverse_sigmoid --teacher-forcing-k 10)
#                                                                  -> runs/seq2seq/gru-scheduled (not committed)
#   gru-by_french      gru's recipe on the by_french split         -> runs/seq2seq/gru-by_french (not committed)
#   bahdanau-by_french bahdanau's recipe on the by_french split    -> runs/seq2seq/bahdanau-by_french (not committed)
# With arguments, only the named runs are trained: scripts/train_seq2seq.sh bahdanau
set -euo pipefail
cd "$(dirname "$0")/.."
COMMON=(--overwrite --hidden-size 128 --batch-size 64 --learning-rate 0.002 --epochs 40 --time-budget 300 --seed 0 --threads 1 --no-progress)
BAHDANAU=(--overwrite --device cpu --hidden-size 256 --batch-size 32 --learning-rate 0.002 --epochs 70 --schedule cosine --dropout 0 --label-smoothing 0.1 --budget-clock cpu --time-budget 300 --seed 0 --threads 1 --no-progress)
OUT=results/seq2seq
if [ $# -eq 0 ]; then set -- gru gru-mixed gru-scheduled bahdanau bahdanau-bi gru-by_french bahdanau-by_french; fi
mkdir -p "$OUT" runs/seq2seq
for run in "$@"; do
  case "$run" in
    gru) seq2seq-attention train --decoder gru --teacher-forcing-ratio 1.0 --checkpoint src/seq2seq_attention/pretrained/gru "${COMMON[@]}" 2>&1 | tee "$OUT/gru.log" ;;
    gru-mixed) seq2seq-attention train --decoder gru --teacher-forcing-ratio 0.5 --checkpoint runs/seq2seq/gru-mixed "${COMMON[@]}" 2>&1 | tee "$OUT/gru-mixed.log" ;;
    bahdanau) seq2seq-attention train --decoder bahdanau --teacher-forcing-ratio 1.0 --checkpoint src/seq2seq_attention/pretrained/bahdanau "${BAHDANAU[@]}" 2>&1 | tee "$OUT/bahdanau.log" ;;
    bahdanau-bi) seq2seq-attention train --decoder bahdanau --bidirectional --teacher-forcing-ratio 1.0 --checkpoint src/seq2seq_attention/pretrained/bahdanau-bi "${BAHDANAU[@]}" 2>&1 | tee "$OUT/bahdanau-bi.log" ;;
    gru-scheduled) seq2seq-attention train --decoder gru --teacher-forcing-schedule inverse_sigmoid --teacher-forcing-k 10 --checkpoint runs/seq2seq/gru-scheduled "${COMMON[@]}" 2>&1 | tee "$OUT/gru-scheduled.log" ;;
    gru-by_french) seq2seq-attention train --decoder gru --split by_french --checkpoint runs/seq2seq/gru-by_french "${COMMON[@]}" 2>&1 | tee "$OUT/gru-by_french.log" ;;
    bahdanau-by_french) seq2seq-attention train --decoder bahdanau --split by_french --checkpoint runs/seq2seq/bahdanau-by_french "${BAHDANAU[@]}" 2>&1 | tee "$OUT/bahdanau-by_french.log" ;;
    *) echo "unknown run $run (choose gru, gru-mixed, gru-scheduled, bahdanau, bahdanau-bi, gru-by_french, bahdanau-by_french)" >&2; exit 2 ;;
  esac
done
