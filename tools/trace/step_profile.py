#!/usr/bin/env python3
"""One decode step, kernel by kernel, from a bw24-kernel-trace CSV (tools/trace/kernel_trace.cpp).

usage: step_profile.py TRACE.csv [--steps N] [--marker SUBSTRING] [--layer-rows N]

A step is the kernels from one marker kernel (default: the one-token argmax, the last launch of
the captured decode graph) to the next. The last N steps whose kernel sequence has the most common
length are averaged position by position:
  seg  = end(i) - end(i-1): kernel i's share of the step's critical path (the step is their sum);
  dur  = end(i) - start(i): how long it was resident, its wait on the predecessor included;
  lead = end(i-1) - start(i): how long before its predecessor's end it started (PDL).
Position 0's seg is the host's part: from the previous step's last kernel to this step's first end
(the graph launch, the token read back, the embedding).
Prints the step's total, the seg summed by kernel, and the positions of the first layers in order.
"""
import argparse, collections, csv, re, statistics


def short(name):
    n = re.sub(r'^void ', '', name)
    n = re.sub(r'\(anonymous namespace\)::|bw24::cuda::|gemv_detail::|bw24::', '', n)
    depth, out = 0, ''
    for ch in n:  # drop the argument list (the outermost parentheses after the template)
        if ch == '(' and depth == 0:
            break
        depth += ch == '<'
        depth -= ch == '>'
        out += ch
    return out[:90]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('trace')
    ap.add_argument('--steps', type=int, default=64)
    ap.add_argument('--marker', default='argmax')
    ap.add_argument('--layer-rows', type=int, default=40)
    a = ap.parse_args()
    rows = [(int(r['start_ns']), int(r['end_ns']), int(r['ctas']), int(r['threads']), short(r['kernel']))
            for r in csv.DictReader(open(a.trace))]
    rows.sort(key=lambda r: r[0])
    marks = [i for i, r in enumerate(rows) if a.marker in r[4]]
    steps = [(marks[j] + 1, marks[j + 1] + 1) for j in range(len(marks) - 1)]
    if not steps:
        raise SystemExit('no steps: no two kernels named like %r' % a.marker)
    length = collections.Counter(e - b for b, e in steps).most_common(1)[0][0]
    steps = [s for s in steps if s[1] - s[0] == length][-a.steps:]
    seg = [[] for _ in range(length)]
    dur = [[] for _ in range(length)]
    lead = [[] for _ in range(length)]
    totals = []
    for b, e in steps:
        prev_end = rows[b - 1][1]
        totals.append(rows[e - 1][1] - prev_end)
        for i in range(length):
            s, en = rows[b + i][0], rows[b + i][1]
            seg[i].append(en - prev_end)
            dur[i].append(en - s)
            lead[i].append(prev_end - s)
            prev_end = en
    names = [rows[steps[-1][0] + i][4] for i in range(length)]
    shape = [rows[steps[-1][0] + i][2:4] for i in range(length)]
    m = statistics.mean
    total = m(totals)
    print(f'{len(steps)} steps of {length} kernels; step {total / 1e3:.1f} us (median '
          f'{statistics.median(totals) / 1e3:.1f}), {1e9 / total:.1f} tok/s; host part (position 0 seg) '
          f'{m(seg[0]) / 1e3:.2f} us')
    by = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for i in range(length):
        x = by[names[i]]
        x[0] += 1
        x[1] += m(seg[i])
        x[2] += m(dur[i])
        x[3] += m(lead[i])
    print('\n| kernel | launches a step | seg us a step | % of step | seg us a launch | dur us a launch | lead us a launch |')
    print('|---|---|---|---|---|---|---|')
    for n, (c, sg, du, ld) in sorted(by.items(), key=lambda kv: -kv[1][1]):
        print(f'| {n} | {c} | {sg / 1e3:.1f} | {100 * sg / total:.1f} | {sg / c / 1e3:.2f} | {du / c / 1e3:.2f} | '
              f'{ld / c / 1e3:.2f} |')
    print('\n| pos | kernel | ctas x threads | seg us | dur us | lead us |')
    print('|---|---|---|---|---|---|')
    for i in range(min(length, a.layer_rows)):
        print(f'| {i} | {names[i]} | {shape[i][0]} x {shape[i][1]} | {m(seg[i]) / 1e3:.2f} | {m(dur[i]) / 1e3:.2f} | '
              f'{m(lead[i]) / 1e3:.2f} |')


if __name__ == '__main__':
    main()
