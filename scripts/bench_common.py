"""What the Python reference scripts (bench_reference.py, ort_reference.py) share: the
synthetic documents benches/embed.rs embeds (the same xorshift over the same words, so
every side measures the same texts) and the median timer."""

import statistics
import time

WORDS = """the index note search query model vector folder markdown heading rollout feature flag cleanup
test deploy database migration schema latency cache embedding token window chunk passage ranking fusion
keyword meaning paraphrase and of to a in is that for it with as was on be at by sqlite watcher socket
daemon panel hotkey snippet tag title frontmatter""".split()


def documents(n, words):
    state = 0x2545F4914F6CDD1D
    mask = (1 << 64) - 1
    out = []
    for _ in range(n):
        doc = []
        for _ in range(words):
            state ^= (state << 13) & mask
            state ^= state >> 7
            state ^= (state << 17) & mask
            doc.append(WORDS[state % len(WORDS)])
        out.append(" ".join(doc))
    return out


def median_time(fn, runs, warmup=1):
    """Median seconds of `runs` calls of `fn`, after `warmup` calls not counted."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)
